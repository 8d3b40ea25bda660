// Every generated file of the monitoring mixin, keyed by its path from the repository root.
// hack/generate/mixin.sh writes them with `jsonnet -S -m .`.
local mixin = import '../../mixin.libsonnet';
local header = '# Generated from mixin.libsonnet by hack/generate/mixin.sh. DO NOT EDIT.\n';
local yaml(v) = header + std.manifestYamlDoc(v, indent_array_in_object=false, quote_keys=false) + '\n';
local labels = { 'app.kubernetes.io/name': 'kubecause', 'app.kubernetes.io/component': 'monitoring' };

{
  'rules/generated/kubecause-alerts.yaml': yaml(mixin.prometheusAlerts),
  'rules/generated/kubecause-rules.yaml': yaml(mixin.prometheusRules),
  'deploy/mixin/prometheusrule.yaml': yaml({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'kubecause', labels: labels },
    spec: { groups: mixin.prometheusRules.groups + mixin.prometheusAlerts.groups },
  }),
  'deploy/mixin/dashboards-configmaps.yaml': header + std.manifestYamlStream([
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
} + {
  ['dashboards/generated/' + name]: std.manifestJsonEx(mixin.grafanaDashboards[name], '  ') + '\n'
  for name in std.objectFields(mixin.grafanaDashboards)
}
