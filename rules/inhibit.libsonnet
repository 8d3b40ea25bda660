// Alertmanager inhibition rules: one page per incident. Written to
// rules/alertmanager/inhibit-rules.yaml (the inhibit_rules of alertmanager.yml) and
// rules/alertmanager/alertmanagerconfig.yaml (the same rules as a prometheus-operator
// AlertmanagerConfig). docs/alerts.md explains each rule and the group_by to use with them.

{
  local cfg = $._config,
  local cats = cfg.causeCategories,
  local cl = cfg.clusterLabel,
  // Per-pod alerts (KubecausePodEvicted counts pods per node and namespace and names none).
  local podAlerts = [a for a in cfg.podAlerts if a != cats.eviction.alert],
  // Per-pod alerts of pods that have a node (an unschedulable pod has none), and the eviction
  // alert, which names the node.
  local nodePodAlerts = [a for a in cfg.podAlerts if a != cats.scheduling.alert],
  local nodeNotReady = if cfg.kubernetesMixinInstalled then 'KubeNodeNotReady' else 'KubecauseNodeNotReady',
  local nodePressure = if cfg.kubernetesMixinInstalled then 'KubeNodePressure' else 'KubecauseNodePressure',
  local re(names) = std.join('|', names),
  // 'name=~"value"' as an AlertmanagerConfig matcher {name, matchType, value}.
  local matcher(s) =
    local i = [j for j in std.range(0, std.length(s) - 1) if s[j] == '=' || s[j] == '!'][0];
    local op = if std.member(['~', '='], s[i + 1]) then s[i:i + 2] else '=';
    { name: s[:i], matchType: op, value: s[i + std.length(op) + 1:std.length(s) - 1] },

  // The recommended route: one notification per incident, per node or per workload. Pod
  // alerts group per workload (a CronJob's runs are one workload), node-level alerts per node,
  // incidents per cause and target, the rest per alert. `receiver` is a placeholder name.
  alertmanagerRoute:: {
    receiver: cfg.alertmanagerReceiver,
    group_by: [cl, 'alertname', 'namespace', 'workload_type', 'workload'],
    group_wait: '30s',
    group_interval: '5m',
    repeat_interval: '4h',
    routes: [
      {
        matchers: ['alertname="KubecauseIncident"'],
        group_by: [cl, 'alertname', 'cause', 'target'],
      },
      {
        matchers: ['alertname=~"%s"' % re([cats.sandbox.alert, cats.eviction.alert, nodeNotReady, nodePressure])],
        group_by: [cl, 'alertname', 'node'],
      },
      {
        matchers: ['alertname=~"Kubecause.*ErrorBudgetBurn|KubecauseIstiodRemote.*|KubecauseEndpointCheckFailing|KubecauseDown|KubecauseWatchFailing|KubecauseStateSourceMissing|KubecauseSeriesCapReached|%s"' % cats.other.alert],
        group_by: [cl, 'alertname'],
      },
      {
        matchers: ['alertname=~"KubecausePVC.*"'],
        group_by: [cl, 'alertname', 'namespace'],
      },
    ],
  },

  // The route as an AlertmanagerConfig's spec.route (camelCase keys, structured matchers).
  alertmanagerConfigRoute:: {
    local r = $.alertmanagerRoute,
    receiver: r.receiver,
    groupBy: r.group_by,
    groupWait: r.group_wait,
    groupInterval: r.group_interval,
    repeatInterval: r.repeat_interval,
    // prometheus-operator with alertmanagerConfigMatcherStrategy None: without a matcher the
    // route would take every alert of the Alertmanager, not only kubecause's.
    matchers: [matcher('alertname=~"Kubecause.*"')],
    routes: [{ matchers: [matcher(m) for m in x.matchers], groupBy: x.group_by } for x in r.routes],
  },

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
      // An incident names the cause and its target (registry, CNI plugin, CSI driver, node,
      // quota, StorageClass): the per-pod, per-claim and per-CronJob alerts of that cause and
      // target are its detail, not pages.
      source_matchers: ['alertname="KubecauseIncident"'],
      target_matchers: ['alertname=~"%s"' % re(cfg.podStartAlerts + [cats.storage.alert, 'KubecauseCronJobFailing'])],
      equal: [cl, 'cause', 'target'],
    },
    {
      // The istiod-remote endpoints are wrong now: that alert is the page, not the SLO burn.
      source_matchers: ['alertname="KubecauseIstiodRemoteEndpointsMismatch"'],
      target_matchers: ['alertname="KubecauseIstiodRemoteErrorBudgetBurn"'],
      equal: [cl],
    },
    {
      // Sidecars cannot reach istiod while its endpoints are wrong: their not-ready probes
      // are that page's detail.
      source_matchers: ['alertname="KubecauseIstiodRemoteEndpointsMismatch"'],
      // (cause table: symptomOf: istiod_remote)
      target_matchers: ['alertname="%s"' % cats.probe.alert, 'symptom_of="istiod_remote"'],
      equal: [cl],
    },
    {
      // A fast burn (critical) inhibits the slow burns (warning) of the same SLO.
      source_matchers: ['alertname=~"KubecausePodStartErrorBudgetBurn|KubecauseIstiodRemoteErrorBudgetBurn"', 'severity="critical"'],
      target_matchers: ['alertname=~"KubecausePodStartErrorBudgetBurn|KubecauseIstiodRemoteErrorBudgetBurn"', 'severity="warning"'],
      equal: [cl, 'alertname'],
    },
    {
      // A node that is not ready explains the failing and evicted pods on it: one page for
      // the node.
      source_matchers: ['alertname="%s"' % nodeNotReady],
      target_matchers: ['alertname=~"%s"' % re(nodePodAlerts)],
      equal: [cl, 'node'],
    },
    {
      // A node under disk, memory or PID pressure explains the pods it evicts and those that
      // cannot start or run on it.
      source_matchers: ['alertname="%s"' % nodePressure],
      target_matchers: ['alertname=~"%s"' % re(nodePodAlerts)],
      equal: [cl, 'node'],
    },
    {
      // An incident on a node (a full disk, its runtime) names the cause the node's pressure
      // only hints at: one notification for the node.
      source_matchers: ['alertname="KubecauseIncident"', 'node!=""'],
      target_matchers: ['alertname="%s"' % nodePressure],
      equal: [cl, 'node'],
    },
    {
      // A pod waits for a claim that cannot be bound: the claim's alert names why.
      source_matchers: ['alertname=~"%s|KubecausePVCPending"' % cats.storage.alert],
      // (cause table: symptomOf: pvc)
      target_matchers: ['alertname="%s"' % cats.scheduling.alert, 'symptom_of="pvc"'],
      equal: [cl, 'namespace'],
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
