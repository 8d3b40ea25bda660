// Alertmanager inhibition rules: one page per incident. Written to
// rules/alertmanager/inhibit-rules.yaml (the inhibit_rules of alertmanager.yml) and
// rules/alertmanager/alertmanagerconfig.yaml (the same rules as a prometheus-operator
// AlertmanagerConfig). docs/alerts.md explains each rule and the group_by to use with them.
local lib = import 'lib.libsonnet';

{
  local cfg = $._config,
  local cats = cfg.causeCategories,
  local cl = cfg.clusterLabel,
  local podStartAlerts = [cats[k].alert for k in ['volume', 'sandbox', 'image']],
  // Per-pod alerts (KubecausePodEvicted counts pods per namespace and names none).
  local podAlerts = [cats[k].alert for k in std.objectFields(cats) if cats[k].kind == 'Pod' && k != 'eviction'],
  // Per-pod alerts of pods that have a node (an unschedulable pod has none).
  local nodePodAlerts = [cats[k].alert for k in std.objectFields(cats) if cats[k].kind == 'Pod' && !std.member(['eviction', 'scheduling'], k)],
  local nodeNotReady = if cfg.kubernetesMixinInstalled then 'KubeNodeNotReady' else 'KubecauseNodeNotReady',
  local re(names) = std.join('|', names),
  // 'name=~"value"' as an AlertmanagerConfig matcher {name, matchType, value}.
  local matcher(s) =
    local i = [j for j in std.range(0, std.length(s) - 1) if s[j] == '=' || s[j] == '!'][0];
    local op = if std.member(['~', '='], s[i + 1]) then s[i:i + 2] else '=';
    { name: s[:i], matchType: op, value: s[i + std.length(op) + 1:std.length(s) - 1] },

  // The same rules as the spec.inhibitRules of a prometheus-operator AlertmanagerConfig.
  alertmanagerConfigInhibitRules:: [
    {
      sourceMatch: [matcher(m) for m in r.source_matchers],
      targetMatch: [matcher(m) for m in r.target_matchers],
      equal: r.equal,
    }
    for r in $.alertmanagerInhibitRules
  ],

  alertmanagerInhibitRules:: [
    {
      // A pod that cannot start for a platform cause inhibits the pod-start burn alert of its
      // cluster: the specific alert names pod, node and cause. Workload causes do not inhibit:
      // they do not count against the SLO.
      source_matchers: [
        'alertname=~"%s"' % re(podStartAlerts),
        'cause=~"%s"' % re(lib.podStartCauses(cfg)),
      ],
      target_matchers: ['alertname="KubecausePodStartErrorBudgetBurn"'],
      equal: [cl],
    },
    {
      // The istiod-remote endpoints are wrong now: that alert is the page, not the SLO burn.
      source_matchers: ['alertname="KubecauseIstiodRemoteEndpointsMismatch"'],
      target_matchers: ['alertname="KubecauseIstiodRemoteErrorBudgetBurn"'],
      equal: [cl],
    },
    {
      // A fast burn (critical) inhibits the slow burns (warning) of the same SLO.
      source_matchers: ['alertname=~"KubecausePodStartErrorBudgetBurn|KubecauseIstiodRemoteErrorBudgetBurn"', 'severity="critical"'],
      target_matchers: ['alertname=~"KubecausePodStartErrorBudgetBurn|KubecauseIstiodRemoteErrorBudgetBurn"', 'severity="warning"'],
      equal: [cl, 'alertname'],
    },
    {
      // A node that is not ready explains the failing pods on it: one page for the node.
      source_matchers: ['alertname="%s"' % nodeNotReady],
      target_matchers: ['alertname=~"%s"' % re(nodePodAlerts)],
      equal: [cl, 'node'],
    },
    {
      // kubernetes-mixin: the Kubecause alert names the cause of the same pod's problem.
      source_matchers: ['alertname="%s"' % cats.container.alert],
      target_matchers: ['alertname="KubePodCrashLooping"'],
      equal: [cl, 'namespace', 'pod'],
    },
    {
      source_matchers: ['alertname=~"%s"' % re(podAlerts)],
      target_matchers: ['alertname=~"KubeContainerWaiting|KubePodNotReady"'],
      equal: [cl, 'namespace', 'pod'],
    },
  ],
}
