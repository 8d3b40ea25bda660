// Helpers shared by the alerts, the recording rules and the dashboards.
{
  // runbook_url of an alert: the page is the alert name in lower case; anchor is a section
  // (a cause name, or a template such as '{{ $labels.cause }}').
  runbookURL(cfg, alert, anchor=''):: (cfg.runbookURLPattern % std.asciiLower(alert)) + (if anchor != '' then '#' + anchor else ''),

  // The cause table's properties, one series per cluster and cause, value 1 (records.causeInfo):
  // the exporters' kubecause_cause_info, the newest table's where two replicas or a rolling
  // upgrade serve two tables that disagree (kubecause_causes_table_version ranks them; topk
  // keeps one), so every join on it is one-to-one. Rules select causes by these labels, never
  // by name: a cause of the user's own table pages like a built-in one.
  causeInfoLabels:: ['category', 'symptom', 'symptom_of', 'pod_start', 'target_kind', 'runbook_url'],
  // Each cause's properties as each table the exporters serve gives them, value that table's
  // version (records.causeTableVersion).
  causeTableVersion(cfg)::
    |||
      max by (%(by)s) (
        %(info)s
        * ignoring (%(props)s) group_left ()
        %(version)s
      )
    ||| % {
      by: std.join(', ', [cfg.clusterLabel, 'cause'] + $.causeInfoLabels),
      props: std.join(', ', ['cause'] + $.causeInfoLabels),
      info: $.tolerant(cfg, 'kubecause_cause_info{%s}' % cfg.kubecauseSelector),
      version: $.tolerant(cfg, 'kubecause_causes_table_version{%s}' % cfg.kubecauseSelector),
    },
  // The newest table's properties of each cause, from versions (records.causeTableVersion or
  // the expression of it).
  causeInfo(cfg, versions)::
    |||
      count by (%(by)s) (
        topk by (%(cl)s, cause) (1,
          %(versions)s
        )
      )
    ||| % {
      by: std.join(', ', [cfg.clusterLabel, 'cause'] + $.causeInfoLabels),
      cl: cfg.clusterLabel,
      versions: std.strReplace(std.rstripChars(versions, '\n'), '\n', '\n    '),
    },

  // `x and on (cluster, cause) <the causes whose properties match>`: x restricted by property,
  // as the newest table gives them (records.causeInfo).
  withCause(cfg, x, props):: '%s and on (%s, cause) %s{%s}' % [x, cfg.clusterLabel, $.records.causeInfo, props],

  // The properties that make a cause a platform root cause: it counts against the pod-start SLO.
  podStartPropValues:: { pod_start: 'platform', symptom: 'false' },
  podStartProps:: std.join(', ', ['%s="%s"' % [k, $.podStartPropValues[k]] for k in std.objectFields($.podStartPropValues)]),

  // A template for the runbook_url annotation: the runbook of the cause in $labels.cause, read
  // from its own runbook_url label (the table the exporter loaded, the user's included); the
  // alert's page when the cause has none. Read at each evaluation rather than kept as an alert
  // label, so a table upgrade that moves a runbook does not reset the alert.
  causeRunbookURL(cfg, fallback)::
    '{{ with printf `%s{%s=%%q, cause=%%q, runbook_url!=""}` $labels.%s $labels.cause | query }}{{ . | first | label "runbook_url" }}{{ else }}%s{{ end }}' % [$.records.causeInfo, cfg.clusterLabel, cfg.clusterLabel, fallback],

  // Recording rule: one series per state source (source="kube-state-metrics" or "kubecause")
  // that was scraped in the last stateSourceOutageTolerance and has no target up now. The one
  // definition of "a state source is missing": every held() record reads it.
  stateMissingRecord:: $.records.stateMissing,
  stateMissing(cfg)::
    local missing(source, sel) = |||
      label_replace(
        max by (%(cl)s) (max_over_time(up{%(sel)s}[%(tol)s]))
        unless on (%(cl)s)
        max by (%(cl)s) (up{%(sel)s} == 1),
        "source", "%(source)s", "", ""
      )
    ||| % { cl: cfg.clusterLabel, sel: sel, tol: cfg.stateSourceOutageTolerance, source: source };
    missing('kube-state-metrics', cfg.kubeStateMetricsSelector) + 'or\n' + missing('kubecause', cfg.kubecauseSelector),

  // A series read so that a scrape gap does not make it vanish: the last sample within
  // staleTolerance (a restart, one failed scrape). fn, when given, reads the series over window
  // instead of its last sample (max_over_time for flapping state).
  tolerant(cfg, series, fn='last_over_time', window=null)::
    '%s(%s[%s])' % [fn, series, if window == null then cfg.staleTolerance else window],

  // A kube-state-metrics series, selector added, read through tolerant().
  ksm(cfg, metric, matchers='', fn='last_over_time', window=null)::
    $.tolerant(cfg, '%s{%s%s}' % [metric, cfg.kubeStateMetricsSelector, if matchers == '' then '' else ', ' + matchers], fn, window),

  // The expression of a recording rule that the alerts read: expr while every state source is
  // scraped; while one is missing (records.stateMissing), the record's own last value. A firing
  // alert then neither resolves nor notifies again during a kube-state-metrics or kubecause
  // outage of up to stateSourceOutageTolerance, and what was gone before the outage (a deleted
  // pod, a state that ended) stays gone: reading the sources' series over the outage would
  // bring back every series of that window. The record is read as an instant vector, its value
  // at the last evaluation: a range (last_over_time) would bring back a state that ended a few
  // evaluations before the source went (rules/tests/held.yaml).
  held(cfg, record, expr)::
    |||
      (
        %(expr)s
      )
      unless on (%(cl)s) %(missing)s
      or
      %(record)s and on (%(cl)s) %(missing)s
    ||| % {
      expr: std.strReplace(std.rstripChars(expr, '\n'), '\n', '\n  '),
      cl: cfg.clusterLabel,
      missing: $.records.stateMissing,
      record: record,
    },

  // The recording rules (rules/rules.libsonnet writes them, one group per concern; a rule
  // reads only records above it, so the file order is an evaluation order).
  records:: {
    // Which state source is missing (stateMissing), read by every held() record.
    stateMissing: 'cluster:kubecause_state_source_missing:info',
    // Each cause's properties per table served, value the table's version; the newest table's.
    causeTableVersion: 'cluster_cause:kubecause_cause_table_version:max',
    causeInfo: 'cluster_cause:kubecause_cause_info:latest',
    // The workload of ReplicaSets and Jobs (workload_type and workload labels: a Deployment, a
    // CronJob), of the pods they own, and of every pod; the node of every pod.
    replicaSetOwner: 'namespace_replicaset:kubecause_replicaset_owner:info',
    jobOwner: 'namespace_job:kubecause_job_owner:info',
    podOwnerViaReplicaSet: 'namespace_pod:kubecause_pod_owner_via_replicaset:info',
    podOwnerViaJob: 'namespace_pod:kubecause_pod_owner_via_job:info',
    podOwner: 'namespace_pod:kubecause_pod_owner:info',
    podNode: 'namespace_pod:kubecause_pod_node:info',
    podUnowned: 'namespace_pod:kubecause_pod_unowned:info',
    podWorkload: 'namespace_pod:kubecause_pod_workload:info',
    // The pod's state, one series per pod, value 1 (see podState below).
    state: {
      notStarted: 'namespace_pod:kubecause_pod_not_started:max',
      unhealthy: 'namespace_pod:kubecause_pod_unhealthy:max',
      unschedulable: 'namespace_pod:kubecause_pod_unschedulable:max',
      terminated: 'namespace_pod:kubecause_pod_terminated:max',
    },
    // kubecause's view of each pod: one series per (pod, cause, target), value the occurrences
    // on live Events, the replicas deduplicated.
    podEvents: 'namespace_pod_cause:kubecause_object_events:max',
    // The pod's live causes: its root causes, its symptoms only when it has no root cause of
    // any category, and a crash loop of a container the kernel OOM-killed named oom_killed.
    podRoots: 'namespace_pod_cause:kubecause_pod_root_causes:max',
    // Per pod and category, the symptoms of its own root causes (symptom true, no symptom_of)
    // it shows now; and its root causes, live or kept while such a symptom of their category
    // shows (rootCauseHoldFor at most): a root cause whose Event expired or was starved.
    podSymptomCategories: 'namespace_pod_category:kubecause_pod_symptoms:max',
    podRootsKept: 'namespace_pod_cause:kubecause_pod_root_causes_kept:max',
    podOomCrashLoop: 'namespace_pod_cause:kubecause_pod_oom_crash_loop:max',
    podCauses: 'namespace_pod_cause:kubecause_pod_causes:max',
    // A live cause whose category's state holds: per state, and all of them.
    podCauseInStateOf: {
      [k]: 'namespace_pod_cause:kubecause_pod_in_state_%s:max' % { notStarted: 'not_started', unhealthy: 'unhealthy', unschedulable: 'unschedulable', terminated: 'terminated' }[k]
      for k in std.objectFields($.records.state)
    },
    podCauseInState: 'namespace_pod_cause:kubecause_pod_in_state:max',
    // The pods failing now: podCauseInState with the pod's node and workload. Every per-pod
    // alert and the incident alert select from it.
    podFailing: 'namespace_pod_cause:kubecause_pod_failing:max',
    // Per workload, platform cause and target: its pods failing (target_kind of the cause).
    incidentPods: 'namespace_workload_cause:kubecause_pod_start_failing_pods:count',
    // Per platform cause and target, how many workloads have pods failing on it (the
    // incident); a target that is a node is also its `node` label.
    incidentWorkloads: 'cluster_cause_target:kubecause_failing_workloads:count',
    // The workload of a pod that uses each claim, and per workload, storage cause and target
    // its claims failing (incidents shown by claims).
    claimWorkload: 'namespace_persistentvolumeclaim:kubecause_claim_workload:info',
    incidentClaims: 'namespace_workload_cause:kubecause_failing_claims:count',
    // Controllers short of ready pods (a Job: unfinished), per kind and all (kind, name labels).
    controllerShort: {
      ReplicaSet: 'namespace_replicaset:kubecause_replicaset_pods_short:max',
      StatefulSet: 'namespace_statefulset:kubecause_statefulset_pods_short:max',
      DaemonSet: 'namespace_daemonset:kubecause_daemonset_pods_short:max',
      Job: 'namespace_job:kubecause_job_unfinished:max',
    },
    controllersShort: 'namespace_object:kubecause_controller_pods_short:max',
    // The controllers' failures (ReplicaSet, StatefulSet, DaemonSet, Job) on objects still
    // short of pods or unfinished, with the workload the user manages.
    workloadEvents: 'namespace_object_cause:kubecause_workload_events:max',
    workloadOwned: 'namespace_object_cause:kubecause_workload_owned:max',
    workloadUnowned: 'namespace_object_cause:kubecause_workload_unowned:max',
    workloadFailing: 'namespace_workload_cause:kubecause_workload_failing:max',
    // CronJobs (workload_type="CronJob"): per CronJob that exists and is not suspended, its last
    // successful run's time (0 if none); its Jobs started after it and their pods, value the
    // run's start; the causes of those runs' pods and Jobs now, value the newest run's start;
    // those causes kept between runs until a run succeeds (cronJobHoldFor at most), and when each
    // was first seen; the pods' causes, the Jobs' own (DeadlineExceeded, BackoffLimitExceeded)
    // only while no pod's is known; and what the alert names: one per CronJob, the cause first
    // seen.
    cronJobLastSuccessByName: 'namespace_cronjob:kubecause_cronjob_last_success:max',
    cronJobLastSuccess: 'namespace_workload:kubecause_cronjob_last_success:max',
    cronJobRuns: 'namespace_job:kubecause_cronjob_run_since_success:max',
    cronJobRunPods: 'namespace_pod:kubecause_cronjob_run_start:max',
    cronJobRunCauses: 'namespace_workload_cause:kubecause_cronjob_run_causes:max',
    cronJobCausesKept: 'namespace_workload_cause:kubecause_cronjob_causes_kept:max',
    cronJobCauseSince: 'namespace_workload_cause:kubecause_cronjob_cause_since:min',
    cronJobCauses: 'namespace_workload_cause:kubecause_cronjob_causes:max',
    cronJobFailing: 'namespace_workload_cause:kubecause_cronjob_failing:min',
    // Nodes whose pressure alert (KubecauseNodePressure, or kubernetes-mixin's KubeNodePressure)
    // fires: value 1, no series otherwise (the evictions such a pressure explains).
    nodePressureHeld: 'cluster_node:kubecause_node_pressure_held:max',
    // Pods whose failures of a category a known outside problem explains, now or within its
    // settle window (category label): a symptom that never pages on its own. The pods of the
    // mesh (meshProxyContainer) and the mismatch of the istiod-remote endpoints, held; the pods
    // whose claim failed within claimSettleFor.
    meshPods: 'namespace_pod:kubecause_pod_in_mesh:info',
    meshMismatchHeld: 'cluster:kubecause_istiod_remote_mismatch_held:max',
    podClaimFailed: 'namespace_pod:kubecause_pod_claim_failed:max',
    podExplained: 'namespace_pod_category:kubecause_pod_explained:max',
    // Intermediate state of claims, containers and nodes.
    pvcEvents: 'namespace_persistentvolumeclaim_cause:kubecause_object_events:max',
    pvcPending: 'namespace_persistentvolumeclaim:kubecause_pvc_pending:max',
    pvcPendingUsed: 'namespace_persistentvolumeclaim:kubecause_pvc_pending_used:max',
    containerWaiting: 'namespace_pod_container_reason:kubecause_container_waiting:max',
    nodeCordoned: 'cluster_node:kubecause_node_cordoned:max',
    // The state each alert below reads, one series per object that is in it (held()).
    pvcProvisioningFailing: 'namespace_persistentvolumeclaim_cause:kubecause_pvc_provisioning_failing:max',
    pvcPendingUnexplained: 'namespace_persistentvolumeclaim:kubecause_pvc_pending_unexplained:max',
    pvcTerminating: 'namespace_persistentvolumeclaim:kubecause_pvc_deletion_timestamp:max',
    containerWaitingUnexplained: 'namespace_pod_container_reason:kubecause_container_waiting_unexplained:max',
    loadBalancerNoAddress: 'namespace_service:kubecause_load_balancer_no_address:max',
    nodeNotReady: 'cluster_node:kubecause_node_not_ready:max',
    nodePressure: 'cluster_node_condition:kubecause_node_pressure:max',
  },
  podWorkloadRecord:: $.records.podWorkload,

  // The state of a pod each category's alert needs, read from kube-state-metrics.
  podState(cfg):: {
    // The pod has not started all its containers yet.
    notStarted: |||
      max by (%(clusterLabel)s, namespace, pod) (%(pending)s) == 1
      or
      max by (%(clusterLabel)s, namespace, pod) (%(waiting)s) == 1
      or
      max by (%(clusterLabel)s, namespace, pod) (%(initWaiting)s) == 1
    ||| % (cfg {
             pending: $.ksm(cfg, 'kube_pod_status_phase', 'phase="Pending"'),
             waiting: $.ksm(cfg, 'kube_pod_container_status_waiting'),
             initWaiting: $.ksm(cfg, 'kube_pod_init_container_status_waiting'),
           }),
    // The pod was not ready, or had a waiting container, at some point of the last flapWindow,
    // it still exists, and it has not been Ready without interruption for recoveredAfter. A
    // container that crashes about a minute after each start flips Ready and waiting on and
    // off; an instant test would reset `for:` at every flip (kubernetes-mixin's
    // KubePodCrashLooping uses max_over_time for the same reason). A crash loop never stays
    // Ready for recoveredAfter (its container runs about a minute at most); a fixed pod does,
    // and its alerts resolve then.
    unhealthy: |||
      (
        max by (%(clusterLabel)s, namespace, pod) (%(notReady)s) == 1
        or
        max by (%(clusterLabel)s, namespace, pod) (%(waiting)s) == 1
      )
      and on (%(clusterLabel)s, namespace, pod)
      max by (%(clusterLabel)s, namespace, pod) (%(info)s)
      unless on (%(clusterLabel)s, namespace, pod)
      max by (%(clusterLabel)s, namespace, pod) (%(ready)s) == 1
    ||| % (cfg {
             notReady: $.ksm(cfg, 'kube_pod_status_ready', 'condition="false"', 'max_over_time', cfg.flapWindow),
             waiting: $.ksm(cfg, 'kube_pod_container_status_waiting', '', 'max_over_time', cfg.flapWindow),
             info: $.ksm(cfg, 'kube_pod_info'),
             ready: $.ksm(cfg, 'kube_pod_status_ready', 'condition="true"', 'min_over_time', cfg.recoveredAfter),
           }),
    unschedulable: 'max by (%(clusterLabel)s, namespace, pod) (%(u)s) == 1\n' % (cfg { u: $.ksm(cfg, 'kube_pod_status_unschedulable') }),
    // The pod still exists and has terminated. Not its status reason: a pod the kubelet
    // rejects at admission under pressure (after a restart) can end Succeeded with no reason,
    // as the real node showed.
    terminated: 'max by (%(clusterLabel)s, namespace, pod) (%(t)s) == 1\n' % (cfg { t: $.ksm(cfg, 'kube_pod_status_phase', 'phase=~"Failed|Succeeded"') }),
  },

  // `unless` the workload is a CronJob kube-state-metrics shows: its runs' pods and Jobs are
  // KubecauseCronJobFailing's (records.cronJobFailing), one alert per CronJob.
  unlessCronJob(cfg):: 'unless on (%s, namespace, workload_type, workload) %s\n' % [cfg.clusterLabel, $.records.cronJobLastSuccess],

  // Dedupe a kubecause expression over the replicas.
  dedup(cfg, expr):: 'max without (%s) (%s)' % [std.join(', ', cfg.replicaLabels), expr],

  // Seconds of a Prometheus duration such as 5m, 1h, 30d.
  seconds(d)::
    local unit = d[std.length(d) - 1];
    local n = std.parseInt(d[0:std.length(d) - 1]);
    n * { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[unit],

  // Text of an annotation in the mixin's language (_config.language: 'en' or 'zh').
  t(cfg, en, zh):: if cfg.language == 'zh' then zh else en,

  // Description suffix naming the cluster when the label is set.
  onCluster(cfg):: $.t(cfg, '{{ with $labels.%(clusterLabel)s }} on cluster {{ . }}{{ end }}', '{{ with $labels.%(clusterLabel)s }}（集群 {{ . }}）{{ end }}') % cfg,

  // Description suffix naming the target of the cause (registry, CNI plugin, node, …) when known.
  onTarget(cfg):: $.t(cfg, '{{ with $labels.target }} ({{ . }}){{ end }}', '{{ with $labels.target }}（{{ . }}）{{ end }}'),

  // Description suffix naming the node and the workload of a pod alert when known.
  podWhere(cfg):: $.t(cfg,
                      '{{ with $labels.node }} on node {{ . }}{{ end }}{{ with $labels.workload }} ({{ $labels.workload_type }} {{ . }}){{ end }}',
                      '{{ with $labels.node }}（节点 {{ . }}）{{ end }}{{ with $labels.workload }}（{{ $labels.workload_type }} {{ . }}）{{ end }}'),

  // Pod-start SLI, bad events over window w: pods that began to show a pod-start root cause.
  // increase() for series that existed w ago; a series born inside the window counts with
  // its whole value (increase() cannot see the first increment of a new series). The causes are
  // the newest table's platform root causes: the record, or (inline, for a spec without the
  // recording rules) the same pick from the exporters' series.
  podStartBad(cfg, w, inline=false)::
    local x = 'kubecause_objects_affected_total{%s, kind="Pod"}' % cfg.kubecauseSelector;
    |||
      sum by (%(cl)s) (
        %(dedup)s
        and on (%(cl)s, cause) %(info)s
      )
    ||| % {
      cl: cfg.clusterLabel,
      info: if inline then $.podStartCausesInline(cfg) else '%s{%s}' % [$.records.causeInfo, $.podStartProps],
      dedup: $.dedup(cfg, '\n    (increase(%(x)s[%(w)s]) and %(x)s offset %(w)s)\n    or\n    (max_over_time(%(x)s[%(w)s]) unless %(x)s offset %(w)s)\n  ' % { x: x, w: w }),
    },

  // The newest table's platform root causes without the records: its pick of each cause's
  // properties, kept where they are a platform root cause's.
  podStartCausesInline(cfg)::
    '(\n    %s\n    and on (%s)\n    %s\n  )' % [
      std.strReplace(std.rstripChars($.causeInfo(cfg, $.causeTableVersion(cfg)), '\n'), '\n', '\n    '),
      std.join(', ', [cfg.clusterLabel, 'cause'] + std.objectFields($.podStartPropValues)),
      $.tolerant(cfg, 'kubecause_cause_info{%s, %s}' % [cfg.kubecauseSelector, $.podStartProps]),
    ],
}
