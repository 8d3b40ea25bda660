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
  causeInfo(cfg)::
    local by = std.join(', ', [cfg.clusterLabel, 'cause'] + $.causeInfoLabels);
    |||
      count by (%(by)s) (
        topk by (%(cl)s, cause) (1,
          max by (%(by)s) (
            %(info)s
            * ignoring (%(props)s) group_left ()
            %(version)s
          )
        )
      )
    ||| % {
      by: by,
      cl: cfg.clusterLabel,
      props: std.join(', ', ['cause'] + $.causeInfoLabels),
      info: $.tolerant(cfg, 'kubecause_cause_info{%s}' % cfg.kubecauseSelector),
      version: $.tolerant(cfg, 'kubecause_causes_table_version{%s}' % cfg.kubecauseSelector),
    },

  // `x and on (cluster, cause) <the causes whose properties match>`: x restricted by property.
  // inline: read the exporters' series rather than the record, for a rule of another group (a
  // record of another group is read out of step); while two tables disagree, a cause either
  // gives the property to is selected.
  withCause(cfg, x, props, inline=false)::
    '%s and on (%s, cause) %s' % [
      x,
      cfg.clusterLabel,
      if inline then $.tolerant(cfg, 'kubecause_cause_info{%s, %s}' % [cfg.kubecauseSelector, props]) else '%s{%s}' % [$.records.causeInfo, props],
    ],

  // The properties that make a cause a platform root cause: it counts against the pod-start SLO.
  podStartProps:: 'pod_start="platform", symptom="false"',

  // A template for the runbook_url annotation: the runbook of the cause in $labels.cause, read
  // from its own runbook_url label (the table the exporter loaded, the user's included); the
  // alert's page when the cause has none. Read at each evaluation rather than kept as an alert
  // label, so a table upgrade that moves a runbook does not reset the alert.
  causeRunbookURL(cfg, fallback)::
    '{{ with printf `%s{%s=%%q, cause=%%q, runbook_url!=""}` $labels.%s $labels.cause | query }}{{ . | first | label "runbook_url" }}{{ else }}%s{{ end }}' % [$.records.causeInfo, cfg.clusterLabel, cfg.clusterLabel, fallback],

  // Recording rule: one series per state source (source="kube-state-metrics" or "kubecause")
  // that was scraped in the last stateSourceOutageTolerance and has no target up now.
  stateMissingRecord:: 'cluster:kubecause_state_source_missing:info',
  stateMissing(cfg)::
    |||
      label_replace(
        max by (%(cl)s) (max_over_time(up{%(ksm)s}[%(tol)s]))
        unless on (%(cl)s)
        max by (%(cl)s) (up{%(ksm)s} == 1),
        "source", "kube-state-metrics", "", ""
      )
      or
      label_replace(
        max by (%(cl)s) (max_over_time(up{%(sel)s}[%(tol)s]))
        unless on (%(cl)s)
        max by (%(cl)s) (up{%(sel)s} == 1),
        "source", "kubecause", "", ""
      )
    ||| % { cl: cfg.clusterLabel, ksm: cfg.kubeStateMetricsSelector, sel: cfg.kubecauseSelector, tol: cfg.stateSourceOutageTolerance },

  // A series read so that a scrape gap does not make it vanish: the last sample within
  // staleTolerance (a restart, one failed scrape). fn, when given, reads the series over window
  // instead of its last sample (max_over_time for flapping state).
  tolerant(cfg, series, fn='last_over_time', window=null)::
    '%s(%s[%s])' % [fn, series, if window == null then cfg.staleTolerance else window],

  // A kube-state-metrics series, selector added, read through tolerant().
  ksm(cfg, metric, matchers='', fn='last_over_time', window=null)::
    $.tolerant(cfg, '%s{%s%s}' % [metric, cfg.kubeStateMetricsSelector, if matchers == '' then '' else ', ' + matchers], fn, window),

  // The expression of a recording rule that the alerts read: expr while every state source is
  // scraped; while one is missing (stateMissingRecord), the record's own last value. A firing
  // alert then neither resolves nor notifies again during a kube-state-metrics or kubecause
  // outage of up to stateSourceOutageTolerance, and what was gone before the outage (a deleted
  // pod, a state that ended) stays gone: reading the sources' series over the outage would
  // bring back every series of that window. The record is read as an instant vector, its value
  // at the last evaluation: a range (last_over_time) would bring back a state that ended a few
  // evaluations before the source went (rules/tests/held.yaml).
  // inline: read which source is missing from stateMissing() rather than its record (for a
  // record outside the record's group).
  held(cfg, record, expr, inline=false)::
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
      missing: if inline then '(\n  %s)' % std.strReplace(std.rstripChars($.stateMissing(cfg), '\n'), '\n', '\n  ') else $.stateMissingRecord,
      record: record,
    },

  // The recording rules every pod alert reads (rules/rules.libsonnet writes them).
  records:: {
    causeInfo: 'cluster_cause:kubecause_cause_info:latest',
    podOwner: 'namespace_pod:kubecause_pod_owner:info',
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
    podCauses: 'namespace_pod_cause:kubecause_pod_causes:max',
    // A live cause whose category's state holds.
    podCauseInState: 'namespace_pod_cause:kubecause_pod_in_state:max',
    // The pods failing now: podCauseInState with the pod's node and workload. Every per-pod
    // alert and the incident alert select from it.
    podFailing: 'namespace_pod_cause:kubecause_pod_failing:max',
    // The controllers' failures (ReplicaSet, StatefulSet, DaemonSet, Job) on objects still
    // short of pods or unfinished, with the workload the user manages.
    // Per platform cause and target, how many workloads have pods failing on it (the
    // incident); a target that is a node is also its `node` label.
    incidentWorkloads: 'cluster_cause_target:kubecause_failing_workloads:count',
    workloadEvents: 'namespace_object_cause:kubecause_workload_events:max',
    workloadOwned: 'namespace_object_cause:kubecause_workload_owned:max',
    workloadFailing: 'namespace_workload_cause:kubecause_workload_failing:max',
    // Nodes whose pressure alert (KubecauseNodePressure, or kubernetes-mixin's KubeNodePressure)
    // fires: value 1, no series otherwise (the evictions such a pressure explains).
    nodePressureHeld: 'cluster_node:kubecause_node_pressure_held:max',
    // The state each alert below reads, one series per object that is in it (objectState).
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

  // The state of claims, containers, Services and nodes the other alerts need, each recorded
  // (records above, through held()) and read by one alert.
  objectState(cfg)::
    local sel = cfg.kubecauseSelector;
    // Node alerts skip cordoned nodes when excludeCordonedNodes is set.
    local unlessCordoned =
      if cfg.excludeCordonedNodes then |||
        unless on (%(clusterLabel)s, node)
        (max by (%(clusterLabel)s, node) (%(unsched)s) == 1)
      ||| % (cfg { unsched: $.ksm(cfg, 'kube_node_spec_unschedulable') }) else '';
    {
      // A claim Pending with a live storage cause.
      pvcProvisioningFailing: |||
        max by (%(clusterLabel)s, namespace, persistentvolumeclaim, cause) (
          label_replace(%(view)s, "persistentvolumeclaim", "$1", "name", "(.+)")
        )
        and on (%(clusterLabel)s, namespace, persistentvolumeclaim)
        (max by (%(clusterLabel)s, namespace, persistentvolumeclaim) (%(pending)s) == 1)
      ||| % (cfg {
               view: $.withCause(cfg, $.tolerant(cfg, 'kubecause_object_events{%s, kind="PersistentVolumeClaim"}' % sel), 'category="storage"', inline=true),
               pending: $.ksm(cfg, 'kube_persistentvolumeclaim_status_phase', 'phase="Pending"'),
             }),
      // A claim a pod uses, Pending, that no live Event with a known cause explains.
      pvcPendingUnexplained: |||
        (
          max by (%(clusterLabel)s, namespace, persistentvolumeclaim) (%(pending)s) == 1
          and on (%(clusterLabel)s, namespace, persistentvolumeclaim)
          max by (%(clusterLabel)s, namespace, persistentvolumeclaim) (%(used)s)
        )
        * on (%(clusterLabel)s, namespace, persistentvolumeclaim) group_left (storageclass)
        max by (%(clusterLabel)s, namespace, persistentvolumeclaim, storageclass) (%(info)s)
        unless on (%(clusterLabel)s, namespace, persistentvolumeclaim)
        label_replace(%(view)s, "persistentvolumeclaim", "$1", "name", "(.+)")
      ||| % (cfg {
               pending: $.ksm(cfg, 'kube_persistentvolumeclaim_status_phase', 'phase="Pending"'),
               used: $.ksm(cfg, 'kube_pod_spec_volumes_persistentvolumeclaims_info'),
               info: $.ksm(cfg, 'kube_persistentvolumeclaim_info'),
               view: $.tolerant(cfg, 'kubecause_object_events{%s, kind="PersistentVolumeClaim", cause!="unknown"}' % sel),
             }),
      // A deleted claim that still exists: value its deletion timestamp.
      pvcTerminating: |||
        max by (%(clusterLabel)s, namespace, persistentvolumeclaim) (%(deleted)s) > 0
      ||| % (cfg { deleted: $.ksm(cfg, 'kube_persistentvolumeclaim_deletion_timestamp') }),
      // A container waiting (over flapWindow: one that runs a minute between crashes still
      // counts) in a pod that exists, is not Ready and has no live cause.
      containerWaitingUnexplained: |||
        max by (%(clusterLabel)s, namespace, pod, container, reason) (%(waiting)s) == 1
        and on (%(clusterLabel)s, namespace, pod)
        max by (%(clusterLabel)s, namespace, pod) (%(info)s)
        unless on (%(clusterLabel)s, namespace, pod)
        max by (%(clusterLabel)s, namespace, pod) (%(ready)s) == 1
        unless on (%(clusterLabel)s, namespace, pod)
        %(causes)s
      ||| % (cfg {
               waiting: $.ksm(cfg, 'kube_pod_container_status_waiting_reason', 'reason=~"CrashLoopBackOff|CreateContainerError|CreateContainerConfigError|RunContainerError"', 'max_over_time', cfg.flapWindow),
               info: $.ksm(cfg, 'kube_pod_info'),
               ready: $.ksm(cfg, 'kube_pod_status_ready', 'condition="true"', 'min_over_time', cfg.recoveredAfter),
               causes: $.records.podCauses,
             }),
      // A LoadBalancer Service without an ingress address.
      loadBalancerNoAddress: |||
        max by (%(clusterLabel)s, namespace, service) (%(type)s) == 1
        unless on (%(clusterLabel)s, namespace, service)
        max by (%(clusterLabel)s, namespace, service) (%(ingress)s)
      ||| % (cfg {
               type: $.ksm(cfg, 'kube_service_spec_type', 'type="LoadBalancer"'),
               ingress: $.ksm(cfg, 'kube_service_status_load_balancer_ingress'),
             }),
      // A node not Ready at some point of flapWindow (one that flips still counts).
      nodeNotReady: |||
        max by (%(clusterLabel)s, node) (%(notReady)s) == 1
        and on (%(clusterLabel)s, node)
        max by (%(clusterLabel)s, node) (%(info)s)
      ||| % (cfg {
               notReady: $.ksm(cfg, 'kube_node_status_condition', 'condition="Ready", status=~"false|unknown"', 'max_over_time', cfg.flapWindow),
               info: $.ksm(cfg, 'kube_node_info'),
             }) + unlessCordoned,
      // A node reporting disk, memory or PID pressure.
      nodePressure: |||
        max by (%(clusterLabel)s, node, condition) (%(cond)s) == 1
      ||| % (cfg { cond: $.ksm(cfg, 'kube_node_status_condition', 'condition=~"DiskPressure|MemoryPressure|PIDPressure", status="true"') }) + unlessCordoned,
    },

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
  // its whole value (increase() cannot see the first increment of a new series).
  podStartBad(cfg, w)::
    local x = 'kubecause_objects_affected_total{%s, kind="Pod"}' % cfg.kubecauseSelector;
    |||
      sum by (%(cl)s) (
        %(dedup)s
        and on (%(cl)s, cause) %(info)s
      )
    ||| % {
      cl: cfg.clusterLabel,
      info: $.tolerant(cfg, 'kubecause_cause_info{%s, %s}' % [cfg.kubecauseSelector, $.podStartProps]),
      dedup: $.dedup(cfg, '\n    (increase(%(x)s[%(w)s]) and %(x)s offset %(w)s)\n    or\n    (max_over_time(%(x)s[%(w)s]) unless %(x)s offset %(w)s)\n  ' % { x: x, w: w }),
    },
}
