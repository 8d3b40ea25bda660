// Every generated file of the monitoring mixin, keyed by its path from the repository root.
// hack/generate/mixin.sh writes them with `jsonnet -S -m .`.
local mixin = import '../../mixin.libsonnet';
local lib = import '../../rules/lib.libsonnet';
local cfg = mixin._config;
local header = '# Generated from mixin.libsonnet by hack/generate/mixin.sh. DO NOT EDIT.\n';
local yaml(v) = header + std.manifestYamlDoc(v, indent_array_in_object=false, quote_keys=false) + '\n';
local labels = { 'app.kubernetes.io/name': 'kubecause', 'app.kubernetes.io/component': 'monitoring' };

{
  'rules/generated/kubecause-alerts.yaml': yaml(mixin.prometheusAlerts),
  'rules/generated/kubecause-rules.yaml': yaml(mixin.prometheusRules),
  // pint's configuration for the generated rules (hack/lint-mixin.sh, rules/mixin_test.go).
  // A recording rule reads records of its own group, whose values are of the same evaluation,
  // except the record of the missing state sources and the records held with it (lib.held):
  // read out of step they are the value of the last evaluation or the held one, never a state
  // a source has not reported yet (docs/alerts.md).
  'rules/pint.hcl': std.join('\n', [
    '// Generated from mixin.libsonnet by hack/generate/mixin.sh. DO NOT EDIT.',
    'check "rule/dependency" {',
    '  ignoreGroupMismatch = [',
  ] + [
    '    "%s",' % r.record
    for g in mixin.prometheusRules.groups
    for r in g.rules
    if std.objectHas(r, 'record') && (r.record == lib.records.stateMissing || std.length(std.findSubstr(lib.records.stateMissing, r.expr)) > 0)
  ] + ['  ]', '}', '']),
  // Alertmanager inhibition rules (docs/alerts.md): the inhibit_rules section of alertmanager.yml.
  // Not under rules/generated, whose files are all Prometheus rule files.
  'rules/alertmanager/inhibit-rules.yaml': yaml({ inhibit_rules: mixin.alertmanagerInhibitRules }),
  // The recommended alertmanager.yml: the route (one notification per incident, node or
  // workload), a placeholder receiver to replace with yours, and the inhibition rules.
  'rules/alertmanager/alertmanager.yml': yaml({
    route: mixin.alertmanagerRoute,
    receivers: [{ name: cfg.alertmanagerReceiver }],
    inhibit_rules: mixin.alertmanagerInhibitRules,
  }),
  // The same rules for prometheus-operator (docs/install.md: needs alertmanagerConfigMatcherStrategy None).
  'rules/alertmanager/alertmanagerconfig.yaml': yaml({
    apiVersion: 'monitoring.coreos.com/v1alpha1',
    kind: 'AlertmanagerConfig',
    metadata: { name: 'kubecause-inhibit-rules', labels: labels },
    spec: {
      route: mixin.alertmanagerConfigRoute,
      receivers: [{ name: cfg.alertmanagerReceiver }],
      inhibitRules: mixin.alertmanagerConfigInhibitRules,
    },
  }),
  'deploy/helm/kubecause/files/mixin/prometheusrule.yaml': yaml({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'kubecause', labels: labels },
    spec: { groups: mixin.prometheusRules.groups + mixin.prometheusAlerts.groups },
  }),
  'deploy/helm/kubecause/files/mixin/dashboards-configmaps.yaml': header + std.manifestYamlStream([
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'kubecause-dashboard-' + std.strReplace(name, '.json', ''),
        labels: labels { grafana_dashboard: '1' },
      },
      data: { [name]: std.manifestJsonEx(mixin.grafanaDashboards[name], '  ') + '\n' },
    }
    for name in std.objectFields(mixin.grafanaDashboards)
  ], indent_array_in_object=false, c_document_end=false, quote_keys=false),
  // The SLOs in a vendor-neutral form (Sloth spec, prometheus/v1): the same SLIs and targets
  // as the recording rules, self-contained (no recording rules needed).
  'slo/kubecause.sloth.yaml': yaml({
    version: 'prometheus/v1',
    service: 'kubecause',
    labels: { app: 'kubecause' },
    slos: [
      {
        name: 'pod-start',
        objective: cfg.podStartSLOTarget * 100,
        description: 'Pods start without a platform failure: node, runtime, CNI, disk, storage attach (causes with podStart: platform in the cause table; each pod counted once per cause, not per retry). Workload mistakes do not count.',
        sli: {
          events: {
            error_query: lib.podStartBad(cfg, '{{.window}}', inline=true),
            total_query: |||
              count by (%(clusterLabel)s) (
                max by (%(clusterLabel)s, namespace, pod, uid) (
                  last_over_time(kube_pod_start_time{%(kubeStateMetricsSelector)s}[{{.window}}])
                  unless kube_pod_start_time{%(kubeStateMetricsSelector)s} offset {{.window}}
                )
              )
            ||| % cfg,
          },
        },
        alerting: {
          name: 'KubecausePodStartErrorBudgetBurn',
          annotations: { summary: 'The pod-start SLO burns its error budget too fast.', runbook_url: lib.runbookURL(cfg, 'KubecausePodStartErrorBudgetBurn') },
          page_alert: { labels: { severity: 'critical' } },
          ticket_alert: { labels: { severity: 'warning' } },
        },
      },
      {
        name: 'istiod-remote-endpoints',
        objective: cfg.istiodRemoteSLOTarget * 100,
        description: 'The istiod-remote endpoints equal their expectation (time based, from the 0/1 gauge).',
        sli: {
          raw: {
            error_ratio_query: |||
              1 - avg_over_time((min by (%(clusterLabel)s) (max without (%(replicas)s) (kubecause_endpoints_match{%(kubecauseSelector)s, %(istiodRemoteSelector)s})))[{{.window}}:1m])
            ||| % (cfg { replicas: std.join(', ', cfg.replicaLabels) }),
          },
        },
        alerting: {
          name: 'KubecauseIstiodRemoteErrorBudgetBurn',
          annotations: { summary: 'The istiod-remote endpoints SLO burns its error budget too fast.', runbook_url: lib.runbookURL(cfg, 'KubecauseIstiodRemoteErrorBudgetBurn') },
          page_alert: { labels: { severity: 'critical' } },
          ticket_alert: { labels: { severity: 'warning' } },
        },
      },
    ],
  }),
} + {
  ['dashboards/generated/' + name]: std.manifestJsonEx(mixin.grafanaDashboards[name], '  ') + '\n'
  for name in std.objectFields(mixin.grafanaDashboards)
}
