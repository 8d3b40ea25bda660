// The kubecause monitoring mixin: alerts, recording rules (SLOs) and Grafana dashboards.
// Tools (mixtool, jsonnet) evaluate the hidden fields _config, prometheusAlerts,
// prometheusRules and grafanaDashboards. The configuration is config.libsonnet; override it:
//   (import 'mixin.libsonnet') + { _config+:: { kubecauseSelector: 'job="my-kubecause"' } }
(import 'config.libsonnet') +
(import 'rules/alerts.libsonnet') +
(import 'rules/rules.libsonnet') +
(import 'rules/inhibit.libsonnet') +
(import 'rules/dependencies.libsonnet') +
(import 'dashboards/dashboards.libsonnet')
