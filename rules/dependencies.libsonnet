// The kube-state-metrics series families the rules read, and KubecauseStateSeriesMissing: while
// kube-state-metrics is scraped, one of them is absent, or has lost a label the rules join on
// (an older or newer kube-state-metrics, --resources, --metric-allowlist or --metric-denylist, a
// metric relabelling, a scrape without honor_labels). The alerts that read it are then blind or
// wrong, and nothing else says so. rules/dependencies_test.go checks that every kube_* family a
// rule reads is listed here and that each entry's alerts are those that read it.
local lib = import 'lib.libsonnet';

{
  local cfg = $._config,
  local ksm = cfg.kubeStateMetricsSelector,
  local cl = cfg.clusterLabel,

  _config+:: {
    // `for` of KubecauseStateSeriesMissing: a kube-state-metrics restart or rollout does not page.
    stateSeriesMissingFor: '15m',
  },

  // A series: family, extra matchers, a filter on its value, its scrape job (kube-state-metrics').
  local s(family, matchers='', filter='', job=ksm) = { family: family, matchers: matchers, filter: filter, job: job },

  // Series kube-state-metrics serves for every object of a kind (and, for the kinds a pod's
  // owner names, the pods that name one; for pods, kubecause's view of their Events, so
  // that a kube-state-metrics without pods is named too): while any of them exists, the kind's
  // families are expected. A family of the kind is checked against the others.
  local objects = {
    pod: [s('kube_pod_info'), s('kube_pod_owner'), s('kube_pod_status_phase'), s('kubecause_object_events', 'kind="Pod"', job=cfg.kubecauseSelector)],
    container: [s('kube_pod_container_status_waiting'), s('kube_pod_container_status_restarts_total'), s('kube_pod_status_phase', 'phase="Running"', '== 1')],
    node: [s('kube_node_info'), s('kube_node_status_condition'), s('kube_node_spec_unschedulable')],
    persistentvolumeclaim: [s('kube_persistentvolumeclaim_info'), s('kube_persistentvolumeclaim_status_phase')],
    service: [s('kube_service_spec_type'), s('kube_service_info')],
    replicaset: [s('kube_replicaset_spec_replicas'), s('kube_replicaset_status_ready_replicas'), s('kube_replicaset_owner'), s('kube_pod_owner', 'owner_kind="ReplicaSet"')],
    statefulset: [s('kube_statefulset_replicas'), s('kube_statefulset_status_replicas_ready'), s('kube_pod_owner', 'owner_kind="StatefulSet"')],
    daemonset: [s('kube_daemonset_status_desired_number_scheduled'), s('kube_daemonset_status_number_available'), s('kube_pod_owner', 'owner_kind="DaemonSet"')],
    job: [s('kube_job_info'), s('kube_job_owner'), s('kube_pod_owner', 'owner_kind="Job"')],
    cronjob: [s('kube_cronjob_info'), s('kube_cronjob_spec_suspend'), s('kube_job_owner', 'owner_kind="CronJob"')],
  },

  // Every family the rules read (kube-state-metrics 2.x, internal/store): the labels the rules
  // need from it, and when it is expected: `kind` (the objects above), or `when`, series that
  // kube-state-metrics serves only when it serves this family too (it exists only in a state),
  // or `unchecked`, why nothing can tell its absence from the absence of that state.
  local families = [
    { family: 'kube_pod_info', labels: ['namespace', 'pod'], kind: 'pod' },
    // owner_kind and owner_name are empty for an object without owner (a bare pod, a Job not of a
    // CronJob): not required.
    { family: 'kube_pod_owner', labels: ['namespace', 'pod'], kind: 'pod' },
    { family: 'kube_pod_status_phase', labels: ['namespace', 'pod', 'phase'], kind: 'pod' },
    { family: 'kube_pod_start_time', labels: ['namespace', 'pod', 'uid'], unchecked: 'served once a pod has status.startTime, which no other series shows' },
    // A running pod has a Ready condition.
    { family: 'kube_pod_status_ready', labels: ['namespace', 'pod', 'condition'], when: [s('kube_pod_status_phase', 'phase="Running"', '== 1')] },
    { family: 'kube_pod_status_unschedulable', labels: ['namespace', 'pod'], when: [s('kube_pod_status_scheduled', 'condition="false"', '== 1')] },
    { family: 'kube_pod_spec_volumes_persistentvolumeclaims_info', labels: ['namespace', 'persistentvolumeclaim'], when: [s('kube_pod_spec_volumes_persistentvolumeclaims_readonly')] },
    { family: 'kube_pod_container_status_waiting', labels: ['namespace', 'pod'], kind: 'container' },
    { family: 'kube_pod_container_status_restarts_total', labels: ['namespace', 'pod', 'container'], kind: 'container' },
    { family: 'kube_pod_container_status_waiting_reason', labels: ['namespace', 'pod', 'container', 'reason'], when: [s('kube_pod_container_status_waiting', '', '== 1')] },
    { family: 'kube_pod_container_status_last_terminated_reason', labels: ['namespace', 'pod', 'container', 'reason'], when: [s('kube_pod_container_status_last_terminated_exitcode')] },
    { family: 'kube_pod_init_container_status_waiting', labels: ['namespace', 'pod'], when: [s('kube_pod_init_container_status_restarts_total')] },
    // The mesh's sidecar (meshProxyContainer), as a container or a native sidecar (init) container.
    { family: 'kube_pod_container_info', labels: ['namespace', 'pod', 'container'], kind: 'container' },
    { family: 'kube_pod_init_container_info', labels: ['namespace', 'pod', 'container'], when: [s('kube_pod_init_container_status_restarts_total')] },
    { family: 'kube_node_info', labels: ['node'], kind: 'node' },
    { family: 'kube_node_status_condition', labels: ['node', 'condition', 'status'], kind: 'node' },
    { family: 'kube_node_spec_unschedulable', labels: ['node'], kind: 'node' },
    { family: 'kube_persistentvolumeclaim_info', labels: ['namespace', 'persistentvolumeclaim'], kind: 'persistentvolumeclaim' },
    { family: 'kube_persistentvolumeclaim_status_phase', labels: ['namespace', 'persistentvolumeclaim', 'phase'], kind: 'persistentvolumeclaim' },
    { family: 'kube_persistentvolumeclaim_deletion_timestamp', labels: ['namespace', 'persistentvolumeclaim'], unchecked: 'served only for a claim being deleted, and no other series is' },
    { family: 'kube_service_spec_type', labels: ['namespace', 'service', 'type'], kind: 'service' },
    { family: 'kube_service_status_load_balancer_ingress', labels: ['namespace', 'service'], unchecked: 'served only for a Service that has a load-balancer address, and no other series is' },
    { family: 'kube_replicaset_spec_replicas', labels: ['namespace', 'replicaset'], kind: 'replicaset' },
    { family: 'kube_replicaset_status_ready_replicas', labels: ['namespace', 'replicaset'], kind: 'replicaset' },
    { family: 'kube_replicaset_owner', labels: ['namespace', 'replicaset'], kind: 'replicaset' },
    { family: 'kube_statefulset_replicas', labels: ['namespace', 'statefulset'], kind: 'statefulset' },
    { family: 'kube_statefulset_status_replicas_ready', labels: ['namespace', 'statefulset'], kind: 'statefulset' },
    { family: 'kube_daemonset_status_desired_number_scheduled', labels: ['namespace', 'daemonset'], kind: 'daemonset' },
    { family: 'kube_daemonset_status_number_available', labels: ['namespace', 'daemonset'], kind: 'daemonset' },
    { family: 'kube_job_info', labels: ['namespace', 'job_name'], kind: 'job' },
    { family: 'kube_job_owner', labels: ['namespace', 'job_name'], kind: 'job' },
    // A Job's completion time is set when it completes (its Complete condition).
    { family: 'kube_job_complete', labels: ['namespace', 'job_name', 'condition'], when: [s('kube_job_status_completion_time')] },
    // A Job has its start time once its controller started it (it has active pods).
    { family: 'kube_job_status_start_time', labels: ['namespace', 'job_name'], when: [s('kube_job_status_active', '', '> 0')] },
    { family: 'kube_cronjob_info', labels: ['namespace', 'cronjob'], kind: 'cronjob' },
    { family: 'kube_cronjob_spec_suspend', labels: ['namespace', 'cronjob'], kind: 'cronjob' },
    { family: 'kube_cronjob_status_last_successful_time', labels: ['namespace', 'cronjob'], unchecked: 'served once a run of the CronJob succeeded, and no other series is' },
  ],

  // Labels a scrape's own target labels can shadow: without honor_labels, Prometheus renames
  // kube-state-metrics' label to exported_<label> and the rules join on the target's.
  local targetLabels = ['namespace', 'pod', 'container', 'service', 'node'],

  // The alert groups of this file (kept out of what the rules read).
  local groups = ['kubecause-state-series-pods', 'kubecause-state-series'],

  // Identifiers (metric and record names, labels) of a PromQL expression: what is left between
  // its other characters (replaced by spaces with the native std.strReplace; a loop over the
  // characters takes minutes).
  local separators = std.stringChars(' \n\t(){}[],;=!~<>+-*/%^|&@"\'`$.#?\\'),
  local tokens(expr) = {
    [t]: true
    for t in std.set(std.split(std.foldl(function(e, c) std.strReplace(e, c, ' '), separators, expr), ' '))
    if t != ''
  },
  // Every rule of the mixin but this file's, with the identifiers its expression reads.
  local rules = [
    { record: std.get(r, 'record', null), alert: std.get(r, 'alert', null), reads: tokens(r.expr) }
    for g in $.prometheusRules.groups + [g for g in $.prometheusAlerts.groups if !std.member(groups, g.name)]
    for r in g.rules
  ],
  // Names read, directly or through recording rules that read them.
  local readsAny(r, names) = std.length([n for n in names if std.objectHas(r.reads, n)]) > 0,
  local closure(names) =
    local more = std.set(names + [r.record for r in rules if r.record != null && readsAny(r, names)]);
    if more == names then names else closure(more),

  local selector(x) = '%s{%s%s}%s' % [x.family, x.job, if x.matchers == '' then '' else ', ' + x.matchers, if x.filter == '' then '' else ' ' + x.filter],

  // The list, with what is derived: expected (the series that say the family should exist) and
  // alerts (the alerts that read it, directly or through recording rules).
  kubeStateMetricsSeries:: [
    local read = closure([f.family]);
    f {
      expected: if std.objectHas(f, 'unchecked') then [] else if std.objectHas(f, 'kind') then [x for x in objects[f.kind] if !(x.family == f.family && x.matchers == '')] else f.when,
      alerts: std.set([r.alert for r in rules if r.alert != null && readsAny(r, read)]),
    }
    for f in families
  ],

  // One rule per checked family: objects that kube-state-metrics would serve it for exist, it
  // has no series with the needed labels set (and not shadowed by the scrape's), and
  // kube-state-metrics is scraped (KubecauseStateSourceMissing says when it is not; kubecause's
  // view of pods outlives it).
  local missingAlert(f) = {
    local present = std.join(', ', [ksm] + ['%s!=""' % l for l in f.labels] + ['exported_%s=""' % l for l in f.labels if std.member(targetLabels, l)]),
    alert: 'KubecauseStateSeriesMissing',
    expr: |||
      group by (%(cl)s) (
        %(expected)s
      )
      unless on (%(cl)s)
      group by (%(cl)s) (%(family)s{%(present)s})
      and on (%(cl)s)
      max by (%(cl)s) (up{%(ksm)s}) == 1
    ||| % {
      cl: cl,
      ksm: ksm,
      family: f.family,
      present: present,
      expected: std.join('\n  or\n  ', [selector(x) for x in f.expected]),
    },
    'for': cfg.stateSeriesMissingFor,
    labels: { severity: 'warning', family: f.family },
    annotations: {
      summary: lib.t(cfg, 'A series the alerts read is missing from kube-state-metrics.', 'kube-state-metrics 缺少告警读取的序列。'),
      description: (
        if cfg.language == 'zh' then 'kube-state-metrics%s 正在被抓取，但没有提供带标签 %s 的 %s 序列，尽管它所描述的对象应有该序列。缺少它时以下告警无法触发或结果错误：%s。' % [lib.onCluster(cfg), std.join(', ', f.labels), f.family, std.join(', ', f.alerts)]
        else 'kube-state-metrics%s is scraped but serves no %s series with the labels %s, although the objects it describes should have one. Without it these alerts are blind or wrong: %s.' % [lib.onCluster(cfg), f.family, std.join(', ', f.labels), std.join(', ', f.alerts)]
      ),
      runbook_url: lib.runbookURL(cfg, 'KubecauseStateSeriesMissing'),
    },
  },

  // A family no alert reads in this configuration (kubernetesMixinInstalled, ingressByNodePort)
  // blinds nothing: no rule.
  local checked = [f for f in $.kubeStateMetricsSeries if f.expected != [] && f.alerts != []],

  prometheusAlerts+:: {
    groups+: [
      {
        name: groups[0],
        rules: [missingAlert(f) for f in checked if std.startsWith(f.family, 'kube_pod_')],
      },
      {
        name: groups[1],
        rules: [missingAlert(f) for f in checked if !std.startsWith(f.family, 'kube_pod_')],
      },
    ],
  },
}
