// Alertmanager inhibition rules: one page per incident. Written to
// rules/generated/inhibit-rules.yaml; paste its inhibit_rules into alertmanager.yml (or an
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
