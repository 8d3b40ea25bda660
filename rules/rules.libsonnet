// Recording rules (aggregates for dashboards, SLIs per window) and the SLO burn-rate alerts.
//
// Pod-start SLI (event based, per pod):
//   bad   = pods that began to show a volume, sandbox or image root cause: the increase of
//           kubecause_objects_affected_total{kind="Pod"} (+1 once per pod and cause, never per retry).
//           A series born inside the window counts with its full value, because increase()
//           cannot see the first increment of a new series.
//   total = pods the kubelet started in the window: kube_pod_start_time series (status.startTime,
//           set when the kubelet admits the pod, before volumes, sandbox and images) whose value
//           lies inside the window, including pods deleted since (last_over_time).
//   Approximation: a pod with two root causes counts twice (the ratio is clamped to 1); pods
//   that lived shorter than a scrape interval are missed by total; counts are lower bounds.
// istiod-remote SLI (time based): share of time the endpoints matched the expectation
//   (kubecause_endpoints_match, 0/1, the worst Service of a cluster).
local lib = import 'lib.libsonnet';

{
  local cfg = $._config,
  local sel = cfg.kubecauseSelector,
  local ksm = cfg.kubeStateMetricsSelector,
  local cl = cfg.clusterLabel,
  local cats = cfg.causeCategories,
  local rec = lib.records,
  // The categories whose causes are counted on pods.
  local podCats = 'category=~"%s"' % std.join('|', cfg.podCategories),
  // The pod states the pod categories need, and the categories of each.
  local podStatesCats = {
    [s]: [k for k in cfg.podCategories if cats[k].state == s]
    for s in ['notStarted', 'unhealthy', 'unschedulable', 'terminated']
  },
  local podStates = [s for s in ['notStarted', 'unhealthy', 'unschedulable', 'terminated'] if std.length(podStatesCats[s]) > 0],

  // A recording rule.
  local record(name, expr) = { record: name, expr: expr },
  // A record that the alerts read, held while a state source is missing (lib.held).
  local heldRecord(name, expr) = record(name, lib.held(cfg, name, expr)),
  // A group of recording rules (dropped when every rule of it is switched off).
  local group(name, rules) = { name: name, rules: rules },
  // `label_replace(x, "dst", "$1", "src", "(.+)")`: a label copied under another name.
  local relabel(x, dst, src) = 'label_replace(%s, "%s", "$1", "%s", "(.+)")' % [x, dst, src],
  // The owner labels of kube-state-metrics as the workload's (workload_type, workload).
  local asWorkload(x) = 'label_replace(label_replace(%s, "workload_type", "$1", "owner_kind", "(.+)"), "workload", "$1", "owner_name", "(.+)")' % x,
  local hasOwner = 'owner_kind!="", owner_kind!="<none>"',
  // `max by (cluster, <by>) (x)`.
  local maxBy(by, x) = 'max by (%s, %s) (%s)' % [cl, by, x],

  // The workload of an object of a kind (ReplicaSet, Job) that has an owner (a Deployment, a
  // CronJob): one series per object (objLabel), its owner's kind and name as workload_type and
  // workload.
  local ownerRecord(objLabel, ownerMetric) = |||
    topk by (%(cl)s, namespace, %(obj)s) (1,
      max by (%(cl)s, namespace, %(obj)s, workload_type, workload) (
        %(owner)s
      )
    )
  ||| % { cl: cl, obj: objLabel, owner: asWorkload(lib.ksm(cfg, ownerMetric, hasOwner)) },

  // Pods owned by a kind (ReplicaSet, Job) with the workload that owns that object (record).
  local podOwnerVia(kind, objLabel, record) = |||
    max by (%(cl)s, namespace, pod, workload_type, workload) (
      %(podOwner)s
      * on (%(cl)s, namespace, %(obj)s) group_left (workload_type, workload)
      %(record)s
    )
  ||| % { cl: cl, obj: objLabel, record: record, podOwner: relabel(lib.ksm(cfg, 'kube_pod_owner', 'owner_kind="%s"' % kind), objLabel, 'owner_name') },

  // The workload events (rec.workloadEvents) of a kind (ReplicaSet, Job) whose owner (a
  // Deployment, a CronJob) is the workload, with that workload's labels.
  local ownedBy(kind, objLabel, record) =
    '%s\n* on (%s, namespace, %s) group_left (workload_type, workload)\n%s' % [relabel('%s{kind="%s"}' % [rec.workloadEvents, kind], objLabel, 'name'), cl, objLabel, record],

  // A controller short of ready pods: `max by (objLabel) (want) > max by (objLabel) (have)`.
  // An object's state (by objLabel) with the kind and name labels of kubecause's series.
  local asObject(kind, objLabel, expr) = |||
    label_replace(label_replace(
      %s,
      "kind", "%s", "", ""), "name", "$1", "%s", "(.+)")
  ||| % [std.strReplace(std.rstripChars(expr, '\n'), '\n', '\n  '), kind, objLabel],
  local shortOf(objLabel, want, have) = |||
    max by (%(cl)s, namespace, %(obj)s) (%(want)s)
    >
    max by (%(cl)s, namespace, %(obj)s) (%(have)s)
  ||| % { cl: cl, obj: objLabel, want: lib.ksm(cfg, want), have: lib.ksm(cfg, have) },

  // Node alerts skip cordoned nodes when excludeCordonedNodes is set.
  local unlessCordoned = if cfg.excludeCordonedNodes then 'unless on (%s, node) %s\n' % [cl, rec.nodeCordoned] else '',

  local podStartBad(w) = lib.podStartBad(cfg, w),
  local short = cfg.sloShortWindow,
  local longWindows = [w for w in cfg.sloRecordWindows if w != short],
  // The windows the burn alerts read counts of (minimum event counts).
  local burnLong = [b.long for b in cfg.sloBurnRates],
  local burnShort = [b.short for b in cfg.sloBurnRates],

  local podStartsRecord(w) = 'cluster:kubecause_pod_starts:count%s' % w,
  local podStartErrorsRecord(w) = 'cluster:kubecause_pod_start_errors:count%s' % w,
  local podStartErrorRecord(w) = 'cluster:kubecause_pod_start_error:ratio_rate%s' % w,
  local podStartStuckRecord = 'cluster:kubecause_pod_start_stuck:count',
  local istiodErrorRecord(w) = 'cluster:kubecause_istiod_remote_error:ratio_rate%s' % w,
  local istiodBadRecord(w) = 'cluster:kubecause_istiod_remote_bad_samples:count%s' % w,

  // A count over window w from the record of the short window. The short-window record is
  // evaluated every sloEvaluationInterval (the group interval is set to it), so each event is
  // in short/interval consecutive samples: the sum over w divided by that is the count in w.
  local derivedCount(record, w) =
    'sum_over_time(%(r)s[%(w)s]) / %(n)d\n' % {
      r: record(short),
      w: w,
      n: lib.seconds(short) / lib.seconds(cfg.sloEvaluationInterval),
    },

  // Records of the pod-start SLI for window w, derived from the short-window records.
  local podStartDerived(w) = (
    if std.member(burnLong, w) then [{ record: podStartsRecord(w), expr: derivedCount(podStartsRecord, w) }] else []
  ) + (
    if std.member(burnLong + burnShort, w) then [{ record: podStartErrorsRecord(w), expr: derivedCount(podStartErrorsRecord, w) }] else []
  ) + [
    {
      record: podStartErrorRecord(w),
      expr: 'clamp_max(sum_over_time(%s[%s]) / sum_over_time(%s[%s]), 1)\n' % [podStartErrorsRecord(short), w, podStartsRecord(short), w],
    },
  ],

  // Burn-rate alerts of an SLO, one per window pair of sloBurnRates.
  // guard(pair) is an extra condition (minimum event counts); forOf(pair) the `for` of the pair.
  local burnAlert(name, record, target, what, guard=null, forOf=null, exprOf=null) = [
    {
      alert: name,
      expr: if exprOf != null then exprOf(b) else |||
                                                    %(record)s%(long)s > (%(factor)s * (1 - %(target)s))
                                                    and
                                                    %(record)s%(short)s > (%(factor)s * (1 - %(target)s))
                                                  ||| % (b { record: record, target: std.format('%g', target), factor: std.format('%g', b.factor) })
                                                  + (if guard == null then '' else guard(b)),
      'for': if forOf == null then b['for'] else forOf(b),
      labels: { severity: b.severity, long: b.long, short: b.short },
      annotations: {
        summary: lib.t(cfg, 'The %s SLO burns its error budget too fast.', '%s SLO 的错误预算消耗过快。') % what,
        description: lib.t(cfg,
                           'The %s error ratio%s over the last %s is {{ $value | humanizePercentage }}: %s times the rate that spends the %s error budget of a %s target.',
                           '%s 的错误率%s 在最近 %s 内为 {{ $value | humanizePercentage }}：以 %s 倍的速率消耗 %s 的错误预算（目标 %s）。') % [what, lib.onCluster(cfg), b.long, std.format('%g', b.factor), cfg.sloWindow, std.format('%g', target)],
        runbook_url: lib.runbookURL(cfg, name),
      },
    }
    for b in cfg.sloBurnRates
  ],

  // One group per concern, in the order they read each other: a rule reads only records of the
  // groups above it or above it in its own group (rules/structure_test.go). Rules of a group run
  // in order at each evaluation; a record of another group is read as that group last wrote it.
  prometheusRules+:: {
    groups+: [grp for grp in [
      // What the dashboards graph: occurrences and affected objects by namespace, kind, cause.
      group('kubecause-aggregates', [
        record('namespace_kind_cause:kubecause_events:rate5m', |||
          sum by (%(cl)s, namespace, kind, cause) (
            %(r)s
          )
        ||| % { cl: cl, r: lib.dedup(cfg, 'rate(kubecause_events_total{%s}[5m])' % sel) }),
        record('namespace_kind_cause:kubecause_objects_affected:increase1h', |||
          sum by (%(cl)s, namespace, kind, cause) (
            %(r)s
          )
        ||| % { cl: cl, r: lib.dedup(cfg, 'increase(kubecause_objects_affected_total{%s}[1h])' % sel) }),
      ]),
      // Which state source (kube-state-metrics, kubecause) is missing: every held record reads it.
      group('kubecause-state-sources', [record(rec.stateMissing, lib.stateMissing(cfg))]),
      // The cause table's properties, the newest table's per cause (held while kubecause is missing).
      group('kubecause-cause-table', [
        record(rec.causeTableVersion, lib.causeTableVersion(cfg)),
        heldRecord(rec.causeInfo, lib.causeInfo(cfg, rec.causeTableVersion)),
      ]),
      // The workload and node of every pod: the owner of its ReplicaSet (a Deployment) or of its
      // Job (a CronJob), or else its own owner (StatefulSet, DaemonSet, Job, the Node of a static
      // pod), or else the pod itself.
      group('kubecause-pod-workload', [
        // Read by the workload failures too: held, like the records the alerts read.
        heldRecord(rec.replicaSetOwner, ownerRecord('replicaset', 'kube_replicaset_owner')),
        heldRecord(rec.jobOwner, ownerRecord('job_name', 'kube_job_owner')),
        record(rec.podOwnerViaReplicaSet, podOwnerVia('ReplicaSet', 'replicaset', rec.replicaSetOwner)),
        record(rec.podOwnerViaJob, podOwnerVia('Job', 'job_name', rec.jobOwner)),
        record(rec.podOwner, |||
          topk by (%(cl)s, namespace, pod) (1,
            %(viaRS)s
            or
            %(viaJob)s
            or
            max by (%(cl)s, namespace, pod, workload_type, workload) (
              %(own)s
            )
          )
        ||| % {
          cl: cl,
          viaRS: rec.podOwnerViaReplicaSet,
          viaJob: rec.podOwnerViaJob,
          own: asWorkload('%s unless on (%s, namespace, pod) %s' % [lib.ksm(cfg, 'kube_pod_owner', 'owner_kind!="ReplicaSet", ' + hasOwner), cl, rec.podOwnerViaJob]),
        }),
        // The node of the pod now; during a scrape gap or after the pod went, the last one seen.
        // A pod that got its node inside that window was seen without it too: the node it got
        // wins, or the pod would have two series here and every join on it would fail until the
        // window passed.
        record(rec.podNode, |||
          max by (%(cl)s, namespace, pod, node) (kube_pod_info{%(ksm)s})
          or
          (
            max by (%(cl)s, namespace, pod, node) (%(scheduled)s)
            or on (%(cl)s, namespace, pod)
            max by (%(cl)s, namespace, pod, node) (%(info)s)
          )
          unless on (%(cl)s, namespace, pod) kube_pod_info{%(ksm)s}
        ||| % { cl: cl, ksm: ksm, info: lib.ksm(cfg, 'kube_pod_info'), scheduled: lib.ksm(cfg, 'kube_pod_info', 'node!=""') }),
        // A pod without owner is its own workload.
        record(rec.podUnowned, |||
          label_replace(label_replace(%(pods)s, "workload_type", "Pod", "", ""), "workload", "$1", "pod", "(.+)")
          unless on (%(cl)s, namespace, pod) %(owner)s
        ||| % { cl: cl, owner: rec.podOwner, pods: maxBy('namespace, pod', lib.ksm(cfg, 'kube_pod_info')) }),
        // One series per pod with its node and workload, value 1 (held: the pods' failures read
        // it from this group).
        heldRecord(rec.podWorkload, |||
          max by (%(cl)s, namespace, pod, node, workload_type, workload) (
            %(node)s
            * on (%(cl)s, namespace, pod) group_left (workload_type, workload)
            (%(owner)s or %(unowned)s)
          )
        ||| % { cl: cl, node: rec.podNode, owner: rec.podOwner, unowned: rec.podUnowned }),
      ]),
      // Each pod's state (lib.podState) and live causes, the causes whose category's state holds,
      // and the pods failing now: one group, so that the failures are read from the state of the
      // same evaluation.
      group('kubecause-pod-failing', [
        record(rec.state[k], lib.podState(cfg)[k])
        for k in ['notStarted', 'unhealthy', 'unschedulable', 'terminated']
      ] + [
        record(rec.podEvents, |||
          max by (%(cl)s, namespace, pod, cause, target) (
            %(view)s
          )
        ||| % { cl: cl, view: relabel(lib.tolerant(cfg, 'kubecause_object_events{%s, kind="Pod"}' % sel), 'pod', 'name') }),
        // A pod's root causes (cause table: symptom false) of the pod categories.
        record(rec.podRoots, lib.withCause(cfg, rec.podEvents, 'symptom="false", %s' % podCats) + '\n'),
        // A crash loop of a container the kernel OOM-killed last time and restarted within
        // oomWindow: named by kube-state-metrics' reason, not by an Event.
        record(rec.podOomCrashLoop, |||
          %(events)s{cause="%(loop)s"}
          and on (%(cl)s, namespace, pod)
          max by (%(cl)s, namespace, pod) (
            %(reason)s == 1
            and on (%(cl)s, namespace, pod, container)
            increase(kube_pod_container_status_restarts_total{%(ksm)s}[%(w)s]) > 0
          )
        ||| % { cl: cl, ksm: ksm, events: rec.podEvents, loop: cfg.oomRefines.from, w: cfg.oomWindow, reason: lib.ksm(cfg, 'kube_pod_container_status_last_terminated_reason', 'reason="OOMKilled"') }),
        // Per pod and category, the symptoms of its own root causes it shows now.
        record(rec.podSymptomCategories, |||
          max by (%(cl)s, namespace, pod, category) (
            %(events)s
            * on (%(cl)s, cause) group_left (category)
            %(info)s{symptom="true", symptom_of="", %(cats)s}
          )
        ||| % { cl: cl, events: rec.podEvents, info: rec.causeInfo, cats: podCats }),
        // Its root causes; one whose Event expired or was starved stays while the pod shows a
        // symptom of the same category (its value at the last evaluation, itself), seen within
        // rootCauseHoldFor.
        record(rec.podRootsKept, |||
          %(roots)s
          or
          (
            max without (category) (
              %(kept)s * on (%(cl)s, cause) group_left (category) %(info)s
              and on (%(cl)s, namespace, pod, category) %(symptoms)s
            )
            and on (%(cl)s, namespace, pod, cause, target) max_over_time(%(roots)s[%(hold)s])
            unless on (%(cl)s, namespace, pod) %(roots)s
          )
        ||| % { cl: cl, roots: rec.podRoots, kept: rec.podRootsKept, info: rec.causeInfo, symptoms: rec.podSymptomCategories, hold: cfg.rootCauseHoldFor }),
        // Its root causes, its symptoms only when it has none, the OOM-killed crash loop renamed.
        record(rec.podCauses, |||
          (
            %(roots)s
            or
            (%(symptoms)s unless on (%(cl)s, namespace, pod) %(roots)s)
          )
          unless on (%(cl)s, namespace, pod, cause) %(oom)s
          or
          label_replace(%(oom)s, "cause", "%(oomCause)s", "", "")
        ||| % { cl: cl, roots: rec.podRootsKept, oom: rec.podOomCrashLoop, oomCause: cfg.oomRefines.to, symptoms: lib.withCause(cfg, rec.podEvents, 'symptom="true", %s' % podCats) }),
      ] + [
        // Per pod state: the live causes of the categories whose alert needs it, while it holds.
        record(rec.podCauseInStateOf[s], |||
          %(causes)s
          * on (%(cl)s, cause) group_left (symptom_of)
          %(info)s{%(cats)s}
          and on (%(cl)s, namespace, pod) %(state)s
        ||| % {
          cl: cl,
          causes: rec.podCauses,
          info: rec.causeInfo,
          state: rec.state[s],
          cats: if std.length(podStatesCats[s]) == 1 then 'category="%s"' % podStatesCats[s][0] else 'category=~"%s"' % std.join('|', podStatesCats[s]),
        })
        for s in podStates
      ] + [
        record(rec.podCauseInState, std.join('\nor\n', [rec.podCauseInStateOf[s] for s in podStates]) + '\n'),
        // The same with the pod's node and workload. A pod kube-state-metrics does not (yet)
        // list in kube_pod_info keeps its series, without them.
        heldRecord(rec.podFailing, |||
          %(inState)s * on (%(cl)s, namespace, pod) group_left (node, workload_type, workload) %(workload)s
          or
          %(inState)s unless on (%(cl)s, namespace, pod) %(workload)s
        ||| % { cl: cl, inState: rec.podCauseInState, workload: rec.podWorkload }),
      ]),
      // The claims the storage alerts name.
      group('kubecause-claim-state', [
        // kubecause's view of each claim: one series per (claim, cause, target), the occurrences.
        record(rec.pvcEvents, |||
          max by (%(cl)s, namespace, persistentvolumeclaim, cause, target) (
            %(view)s
          )
        ||| % { cl: cl, view: relabel(lib.tolerant(cfg, 'kubecause_object_events{%s, kind="PersistentVolumeClaim"}' % sel), 'persistentvolumeclaim', 'name') }),
        record(rec.pvcPending, maxBy('namespace, persistentvolumeclaim', lib.ksm(cfg, 'kube_persistentvolumeclaim_status_phase', 'phase="Pending"')) + ' == 1\n'),
        // A Pending claim a pod uses, with its storage class.
        record(rec.pvcPendingUsed, |||
          (
            %(pending)s
            and on (%(cl)s, namespace, persistentvolumeclaim)
            max by (%(cl)s, namespace, persistentvolumeclaim) (%(used)s)
          )
          * on (%(cl)s, namespace, persistentvolumeclaim) group_left (storageclass)
          max by (%(cl)s, namespace, persistentvolumeclaim, storageclass) (%(info)s)
        ||| % { cl: cl, pending: rec.pvcPending, used: lib.ksm(cfg, 'kube_pod_spec_volumes_persistentvolumeclaims_info'), info: lib.ksm(cfg, 'kube_persistentvolumeclaim_info') }),
        // A claim Pending with a live storage cause.
        heldRecord(rec.pvcProvisioningFailing, |||
          %(events)s
          and on (%(cl)s, cause) %(info)s{category="storage"}
          and on (%(cl)s, namespace, persistentvolumeclaim) %(pending)s
        ||| % { cl: cl, events: rec.pvcEvents, info: rec.causeInfo, pending: rec.pvcPending }),
        // A claim a pod uses, Pending, that no live Event with a known cause explains.
        heldRecord(rec.pvcPendingUnexplained, |||
          %(used)s
          unless on (%(cl)s, namespace, persistentvolumeclaim)
          %(events)s{cause!="unknown"}
        ||| % { cl: cl, used: rec.pvcPendingUsed, events: rec.pvcEvents }),
        // A deleted claim that still exists: value its deletion timestamp.
        heldRecord(rec.pvcTerminating, maxBy('namespace, persistentvolumeclaim', lib.ksm(cfg, 'kube_persistentvolumeclaim_deletion_timestamp')) + ' > 0\n'),
      ]),
      // Incidents: per platform cause and shared target, the workloads whose pods (or claims)
      // fail on it; causes whose target is a node (the cause table's `target: node`) also get the
      // `node` label, so that the node's own alerts and the incident can inhibit each other. And
      // the pods stuck, which the pod-start SLO reads.
      group('kubecause-incidents', [
        record(rec.incidentPods, |||
          count by (%(cl)s, namespace, workload_type, workload, cause, target, target_kind) (
            %(failing)s{target!=""}
            * on (%(cl)s, cause) group_left (target_kind)
            %(info)s{%(props)s}
          )
        ||| % { cl: cl, failing: rec.podFailing, info: rec.causeInfo, props: lib.podStartProps }),
        // Any cause with a target, whatever object shows it: per claim, the workload of a pod
        // that uses it; per workload, storage cause and target (a StorageClass, a provisioner),
        // its claims failing.
        record(rec.claimWorkload, |||
          topk by (%(cl)s, namespace, persistentvolumeclaim) (1,
            max by (%(cl)s, namespace, persistentvolumeclaim, workload_type, workload) (
              %(used)s
              * on (%(cl)s, namespace, pod) group_left (workload_type, workload)
              max by (%(cl)s, namespace, pod, workload_type, workload) (%(workload)s)
            )
          )
        ||| % { cl: cl, used: lib.ksm(cfg, 'kube_pod_spec_volumes_persistentvolumeclaims_info'), workload: rec.podWorkload }),
        record(rec.incidentClaims, |||
          count by (%(cl)s, namespace, workload_type, workload, cause, target) (
            %(failing)s{target!=""}
            * on (%(cl)s, namespace, persistentvolumeclaim) group_left (workload_type, workload)
            %(owner)s
          )
        ||| % { cl: cl, failing: rec.pvcProvisioningFailing, owner: rec.claimWorkload }),
        record(rec.incidentWorkloads, |||
          label_replace(
            count by (%(cl)s, cause, target) (%(pods)s{target_kind="node"}),
            "node", "$1", "target", "(.+)"
          )
          or
          count by (%(cl)s, cause, target) (%(pods)s{target_kind!="node"})
          or
          count by (%(cl)s, cause, target) (%(claims)s)
        ||| % { cl: cl, pods: rec.incidentPods, claims: rec.incidentClaims }),
        // Pods that have not started and show a platform root cause now: while there are
        // some, the outage goes on even when no new pod starts (the short window of the
        // burn alerts would otherwise see no starts and resolve while pods are broken).
        record(podStartStuckRecord, |||
          count by (%(cl)s) (
            max by (%(cl)s, namespace, pod) (%(failing)s)
          )
        ||| % { cl: cl, failing: lib.withCause(cfg, rec.podFailing, lib.podStartProps) }),
      ]),
      // Controllers that cannot create their pods or gave up (cause category workload), on
      // objects still short of ready pods (ReplicaSet, StatefulSet, DaemonSet) or unfinished
      // (Job), per workload the user manages. It resolves when the controller has its pods.
      // And the runs of CronJobs: the causes of their pods and Jobs, per CronJob, until a run
      // succeeds.
      group('kubecause-workload-failures', [
        // Per kind, with kind and name labels; the kinds together.
        record(rec.controllerShort.ReplicaSet, asObject('ReplicaSet', 'replicaset', shortOf('replicaset', 'kube_replicaset_spec_replicas', 'kube_replicaset_status_ready_replicas'))),
        record(rec.controllerShort.StatefulSet, asObject('StatefulSet', 'statefulset', shortOf('statefulset', 'kube_statefulset_replicas', 'kube_statefulset_status_replicas_ready'))),
        record(rec.controllerShort.DaemonSet, asObject('DaemonSet', 'daemonset', shortOf('daemonset', 'kube_daemonset_status_desired_number_scheduled', 'kube_daemonset_status_number_available'))),
        record(rec.controllerShort.Job, asObject('Job', 'job_name', |||
          max by (%(cl)s, namespace, job_name) (%(info)s)
          unless on (%(cl)s, namespace, job_name)
          max by (%(cl)s, namespace, job_name) (%(complete)s) == 1
        ||| % { cl: cl, info: lib.ksm(cfg, 'kube_job_info'), complete: lib.ksm(cfg, 'kube_job_complete', 'condition="true"') })),
        record(rec.controllersShort, std.join('\nor\n', [rec.controllerShort[k] for k in ['ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job']]) + '\n'),
        record(rec.workloadEvents, |||
          max by (%(cl)s, namespace, kind, name, cause, target) (%(events)s)
          and on (%(cl)s, cause) %(info)s{category="workload"}
          and on (%(cl)s, namespace, kind, name) %(short)s
        ||| % { cl: cl, info: rec.causeInfo, short: rec.controllersShort, events: lib.tolerant(cfg, 'kubecause_object_events{%s, kind=~"ReplicaSet|StatefulSet|DaemonSet|Job"}' % sel) }),
        // The same objects when a workload owns them: a ReplicaSet's Deployment, a Job's
        // CronJob (workload_type and workload labels added).
        record(rec.workloadOwned, '%s\nor\n%s\n' % [ownedBy('ReplicaSet', 'replicaset', rec.replicaSetOwner), ownedBy('Job', 'job_name', rec.jobOwner)]),
        // Per workload the user manages: the owner where there is one, else the object.
        // The objects no workload owns are their own workload (StatefulSet, DaemonSet, Job).
        record(rec.workloadUnowned, |||
          label_replace(label_replace(%(events)s, "workload_type", "$1", "kind", "(.+)"), "workload", "$1", "name", "(.+)")
          unless on (%(cl)s, namespace, kind, name)
          %(owned)s
        ||| % { cl: cl, owned: rec.workloadOwned, events: rec.workloadEvents }),
        heldRecord(rec.workloadFailing, |||
          max by (%(cl)s, namespace, workload_type, workload, cause, target) (
            %(owned)s or %(unowned)s
          )
        ||| % { cl: cl, owned: rec.workloadOwned, unowned: rec.workloadUnowned }),
        // A CronJob's runs: one alert per CronJob while its runs since the last success fail.
        record(rec.cronJobLastSuccessByName, |||
          (
            max by (%(cl)s, namespace, cronjob) (%(success)s)
            or
            max by (%(cl)s, namespace, cronjob) (%(info)s) * 0
          )
          unless on (%(cl)s, namespace, cronjob)
          max by (%(cl)s, namespace, cronjob) (%(suspend)s) == 1
        ||| % {
          cl: cl,
          success: lib.ksm(cfg, 'kube_cronjob_status_last_successful_time'),
          info: lib.ksm(cfg, 'kube_cronjob_info'),
          suspend: lib.ksm(cfg, 'kube_cronjob_spec_suspend'),
        }),
        heldRecord(rec.cronJobLastSuccess, |||
          max by (%(cl)s, namespace, workload_type, workload) (
            label_replace(label_replace(%(byName)s, "workload_type", "CronJob", "", ""), "workload", "$1", "cronjob", "(.+)")
          )
        ||| % { cl: cl, byName: rec.cronJobLastSuccessByName }),
        record(rec.cronJobRuns, |||
          max by (%(cl)s, namespace, job_name) (%(start)s)
          * on (%(cl)s, namespace, job_name) group_left (workload_type, workload)
          %(owner)s{workload_type="CronJob"}
          > on (%(cl)s, namespace, workload_type, workload) group_left ()
          %(success)s
        ||| % { cl: cl, start: lib.ksm(cfg, 'kube_job_status_start_time'), owner: rec.jobOwner, success: rec.cronJobLastSuccess }),
        // The pods of those runs, value their run's start.
        record(rec.cronJobRunPods, |||
          max by (%(cl)s, namespace, pod, workload_type, workload) (
            %(podJob)s
            * on (%(cl)s, namespace, job_name) group_left (workload_type, workload)
            %(runs)s
          )
        ||| % { cl: cl, podJob: relabel(lib.ksm(cfg, 'kube_pod_owner', 'owner_kind="Job"'), 'job_name', 'owner_name'), runs: rec.cronJobRuns }),
        // The causes of those runs' pods and Jobs now, value the start of the newest run that
        // shows each (not the evaluation time: a success completing before kube-state-metrics
        // shows it must still be newer than every failure it ends).
        record(rec.cronJobRunCauses, |||
          max by (%(cl)s, namespace, workload_type, workload, cause, target) (
            %(pods)s{workload_type="CronJob"} * 0 + on (%(cl)s, namespace, pod) group_left () %(runPods)s
            or
            %(owned)s{kind="Job"} * 0 + on (%(cl)s, namespace, job_name) group_left () %(runs)s
          )
        ||| % { cl: cl, pods: rec.podFailing, runPods: rec.cronJobRunPods, runs: rec.cronJobRuns, owned: rec.workloadOwned }),
        // Kept (its value at the last evaluation) while the last success is older.
        heldRecord(rec.cronJobCausesKept, |||
          %(live)s
          or
          (%(kept)s > on (%(cl)s, namespace, workload_type, workload) group_left () %(success)s)
          > (time() - %(hold)d)
        ||| % { cl: cl, live: rec.cronJobRunCauses, kept: rec.cronJobCausesKept, success: rec.cronJobLastSuccess, hold: lib.seconds(cfg.cronJobHoldFor) }),
        // When each kept cause was first seen (its own last value while kept).
        record(rec.cronJobCauseSince, |||
          %(since)s and on (%(cl)s, namespace, workload_type, workload, cause, target) %(kept)s
          or
          %(kept)s * 0 + time()
        ||| % { cl: cl, since: rec.cronJobCauseSince, kept: rec.cronJobCausesKept }),
        // The pods' causes; the Jobs' own (DeadlineExceeded, BackoffLimitExceeded) only while no
        // pod's is known.
        record(rec.cronJobCauses, |||
          %(kept)s unless on (%(cl)s, cause) %(info)s{category="workload"}
          or
          %(kept)s unless on (%(cl)s, namespace, workload) (%(kept)s unless on (%(cl)s, cause) %(info)s{category="workload"})
        ||| % { cl: cl, kept: rec.cronJobCausesKept, info: rec.causeInfo }),
        // One per CronJob: the cause first seen (a second cause of later runs, such as a timeout
        // of the same mount, is no second page); value the time it was first seen.
        heldRecord(rec.cronJobFailing, |||
          bottomk by (%(cl)s, namespace, workload_type, workload) (1,
            %(since)s and on (%(cl)s, namespace, workload_type, workload, cause, target) %(causes)s
          )
        ||| % { cl: cl, since: rec.cronJobCauseSince, causes: rec.cronJobCauses }),
      ]),
      // Containers waiting that no live cause explains (KubecauseContainerWaiting).
      group('kubecause-container-state', if cfg.kubernetesMixinInstalled then [] else [
        // A container waiting (over flapWindow: one that runs a minute between crashes still
        // counts) in a pod that exists and has not been Ready for recoveredAfter.
        record(rec.containerWaiting, |||
          max by (%(cl)s, namespace, pod, container, reason) (%(waiting)s) == 1
          and on (%(cl)s, namespace, pod)
          max by (%(cl)s, namespace, pod) (%(info)s)
          unless on (%(cl)s, namespace, pod)
          max by (%(cl)s, namespace, pod) (%(ready)s) == 1
        ||| % {
          cl: cl,
          waiting: lib.ksm(cfg, 'kube_pod_container_status_waiting_reason', 'reason=~"CrashLoopBackOff|CreateContainerError|CreateContainerConfigError|RunContainerError"', 'max_over_time', cfg.flapWindow),
          info: lib.ksm(cfg, 'kube_pod_info'),
          ready: lib.ksm(cfg, 'kube_pod_status_ready', 'condition="true"', 'min_over_time', cfg.recoveredAfter),
        }),
        heldRecord(rec.containerWaitingUnexplained, |||
          %(waiting)s
          unless on (%(cl)s, namespace, pod)
          %(causes)s
        ||| % {
          cl: cl,
          waiting: rec.containerWaiting,
          // The pods with a live cause of a pod category (as records.podCauses, read here from
          // kubecause's series rather than from a record of another group).
          causes: '(%s)' % lib.withCause(cfg, relabel(lib.tolerant(cfg, 'kubecause_object_events{%s, kind="Pod"}' % sel), 'pod', 'name'), podCats),
        }),
      ]),
      // LoadBalancer Services without an ingress address.
      group('kubecause-service-state', if cfg.ingressByNodePort then [] else [
        heldRecord(rec.loadBalancerNoAddress, |||
          max by (%(cl)s, namespace, service) (%(type)s) == 1
          unless on (%(cl)s, namespace, service)
          max by (%(cl)s, namespace, service) (%(ingress)s)
        ||| % { cl: cl, type: lib.ksm(cfg, 'kube_service_spec_type', 'type="LoadBalancer"'), ingress: lib.ksm(cfg, 'kube_service_status_load_balancer_ingress') }),
      ]),
      // Nodes not Ready or under pressure, and those whose pressure alert fires.
      group('kubecause-node-state', (if cfg.kubernetesMixinInstalled then [] else (
                                       (if cfg.excludeCordonedNodes then [record(rec.nodeCordoned, maxBy('node', lib.ksm(cfg, 'kube_node_spec_unschedulable')) + ' == 1\n')] else []) + [
                                         // A node not Ready at some point of flapWindow (one that flips still counts).
                                         heldRecord(rec.nodeNotReady, |||
                                           max by (%(cl)s, node) (%(notReady)s) == 1
                                           and on (%(cl)s, node)
                                           max by (%(cl)s, node) (%(info)s)
                                         ||| % { cl: cl, notReady: lib.ksm(cfg, 'kube_node_status_condition', 'condition="Ready", status=~"false|unknown"', 'max_over_time', cfg.flapWindow), info: lib.ksm(cfg, 'kube_node_info') } + unlessCordoned),
                                         // A node reporting disk, memory or PID pressure.
                                         heldRecord(rec.nodePressure, |||
                                           max by (%(cl)s, node, condition) (%(cond)s) == 1
                                         ||| % { cl: cl, cond: lib.ksm(cfg, 'kube_node_status_condition', 'condition=~"DiskPressure|MemoryPressure|PIDPressure", status="true"') } + unlessCordoned),
                                       ]
                                     )) + [
        // Nodes whose pressure alert fires: the evictions on them are its detail
        // (KubecausePodEvicted). Read from the alert itself (ALERTS), not from a copy of its
        // condition, so that "the pressure paged" and "the evictions are explained" cannot
        // disagree at the edges of its `for` and holds (a DiskPressure of 9m41s at load paged,
        // while a copy of the condition did not yet hold, and the evictions paged after it).
        record(rec.nodePressureHeld, |||
          max by (%(cl)s, node) (ALERTS{alertname="%(alert)s", alertstate="firing"})
        ||| % { cl: cl, alert: if cfg.kubernetesMixinInstalled then 'KubeNodePressure' else 'KubecauseNodePressure' }),
      ]),
      // Failures a known outside problem explains (lib.records.podExplained): the per-pod
      // alerts of their category do not page while it is known and for its settle window after.
      group('kubecause-explained', [
        record(rec.meshPods, |||
          max by (%(cl)s, namespace, pod) (%(c)s)
          or
          max by (%(cl)s, namespace, pod) (%(init)s)
        ||| % { cl: cl, c: lib.ksm(cfg, 'kube_pod_container_info', 'container="%s"' % cfg.meshProxyContainer), init: lib.ksm(cfg, 'kube_pod_init_container_info', 'container="%s"' % cfg.meshProxyContainer) }),
        // Read from the alert (as records.nodePressureHeld): the mismatch paged.
        record(rec.meshMismatchHeld, |||
          max by (%(cl)s) (max_over_time(ALERTS{alertname="KubecauseIstiodRemoteEndpointsMismatch", alertstate="firing"}[%(settle)s]))
        ||| % { cl: cl, settle: cfg.meshSettleFor }),
        // Pods that use a claim whose storage failed within claimSettleFor: they cannot be
        // scheduled nor mount it until it is bound.
        record(rec.podClaimFailed, |||
          max by (%(cl)s, namespace, pod) (
            %(used)s
            and on (%(cl)s, namespace, persistentvolumeclaim)
            max_over_time(%(failing)s[%(settle)s])
          )
        ||| % { cl: cl, used: lib.ksm(cfg, 'kube_pod_spec_volumes_persistentvolumeclaims_info'), failing: rec.pvcProvisioningFailing, settle: cfg.claimSettleFor }),
        record(rec.podExplained, |||
          label_replace(%(mesh)s and on (%(cl)s) %(held)s, "category", "probe", "", "")
          or
          label_replace(%(claim)s, "category", "scheduling", "", "")
          or
          label_replace(%(claim)s, "category", "volume", "", "")
        ||| % { cl: cl, mesh: rec.meshPods, held: rec.meshMismatchHeld, claim: rec.podClaimFailed }),
      ]),
    ] if std.length(grp.rules) > 0] + [
      {
        // Pod-start SLI over the short window. Only platform causes count (cause table:
        // podStart: platform); a tenant's typo'd image tag or missing ConfigMap is that
        // workload's alert, not the platform's budget.
        name: 'kubecause-slo-pod-start',
        interval: cfg.sloEvaluationInterval,
        rules: [
          {
            record: podStartsRecord(short),
            // Every pod seen in the window counts 0 or 1, so the record exists (and is 0) in a
            // window without starts: the derived windows average over it.
            expr: |||
              sum by (%(cl)s) (
                max by (%(cl)s, namespace, pod, uid) (last_over_time(kube_pod_start_time{%(ksm)s}[%(w)s])) > bool time() - %(s)d
              )
            ||| % { cl: cl, ksm: ksm, w: short, s: lib.seconds(short) },
          },
          {
            record: podStartErrorsRecord(short),
            expr: |||
              %(bad)s  or
              0 * %(total)s
            ||| % { bad: std.rstripChars(podStartBad(short), '\n'), total: podStartsRecord(short) },
          },
          {
            record: podStartErrorRecord(short),
            expr: 'clamp_max(%s / %s, 1)\n' % [podStartErrorsRecord(short), podStartsRecord(short)],
          },
        ] + std.flattenArrays([podStartDerived(w) for w in longWindows]),
      },
      {
        name: 'kubecause-slo-istiod-remote',
        interval: cfg.sloEvaluationInterval,
        rules: [
          {
            record: 'cluster:kubecause_istiod_remote_endpoints_match:min',
            expr: |||
              min by (%(cl)s) (
                %(r)s
              )
            ||| % { cl: cl, r: lib.dedup(cfg, 'kubecause_endpoints_match{%s, %s}' % [sel, cfg.istiodRemoteSelector]) },
          },
        ] + [
          {
            record: istiodErrorRecord(w),
            expr: '1 - avg_over_time(cluster:kubecause_istiod_remote_endpoints_match:min[%s])\n' % w,
          }
          for w in cfg.sloRecordWindows
        ] + [
          // Bad samples (minutes at the default interval) per short window of a burn pair.
          {
            record: istiodBadRecord(w),
            expr: 'count_over_time(cluster:kubecause_istiod_remote_endpoints_match:min[%(w)s]) - sum_over_time(cluster:kubecause_istiod_remote_endpoints_match:min[%(w)s])\n' % { w: w },
          }
          for w in std.set([b.short for b in cfg.sloBurnRates])
        ],
      },
    ],
  },

  prometheusAlerts+:: {
    groups+: [
      {
        name: 'kubecause-slo',
        rules:
          // Minimum event counts on both windows: enough pod starts and platform failures in
          // the long window, and more than one platform failure in the short one. One failing
          // pod is never a page; its per-cause alert names it. The short window also holds
          // while pods stay stuck on a platform cause, so the page does not resolve just
          // because no new pod was started.
          burnAlert('KubecausePodStartErrorBudgetBurn',
                    'cluster:kubecause_pod_start_error:ratio_rate',
                    cfg.podStartSLOTarget,
                    lib.t(cfg, 'pod-start', 'Pod 启动'),
                    exprOf=function(b) |||
                      %(ratio)s%(long)s > %(thr)s
                      and on (%(cl)s)
                      %(startsLong)s >= %(minStarts)d
                      and on (%(cl)s)
                      %(errorsLong)s >= %(minErrors)d
                      and on (%(cl)s)
                      (
                        (%(ratio)s%(short)s > %(thr)s and on (%(cl)s) %(errorsShort)s >= %(minShortErrors)d)
                        or
                        %(stuck)s >= %(minShortErrors)d
                      )
                    ||| % {
                      cl: cl,
                      ratio: 'cluster:kubecause_pod_start_error:ratio_rate',
                      long: b.long,
                      short: b.short,
                      thr: '(%s * (1 - %s))' % [std.format('%g', b.factor), std.format('%g', cfg.podStartSLOTarget)],
                      startsLong: podStartsRecord(b.long),
                      errorsLong: podStartErrorsRecord(b.long),
                      errorsShort: podStartErrorsRecord(b.short),
                      stuck: podStartStuckRecord,
                      minStarts: cfg.podStartSLOMinStarts,
                      minErrors: cfg.podStartSLOMinErrors,
                      minShortErrors: cfg.podStartSLOMinShortErrors,
                    }) +
          // A time-based SLI: at least istiodRemoteSLOMinBadSamples bad samples in the short
          // window (one bad sample is not a page), and silent while
          // KubecauseIstiodRemoteEndpointsMismatch fires and for two short windows after it:
          // a sustained mismatch is that alert's page, the burn alerts catch mismatches that
          // come and go faster than its `for`. Their `for` outlasts its `for`, so the specific
          // alert fires first.
          burnAlert('KubecauseIstiodRemoteErrorBudgetBurn',
                    'cluster:kubecause_istiod_remote_error:ratio_rate',
                    cfg.istiodRemoteSLOTarget,
                    lib.t(cfg, 'istiod-remote endpoints', 'istiod-remote 端点'),
                    function(b) |||
                      and on (%(cl)s)
                      %(bad)s >= %(minBad)d
                      unless on (%(cl)s)
                      max by (%(cl)s) (max_over_time(ALERTS{alertname="KubecauseIstiodRemoteEndpointsMismatch", alertstate="firing"}[%(lookback)s]))
                    ||| % {
                      cl: cl,
                      bad: istiodBadRecord(b.short),
                      minBad: cfg.istiodRemoteSLOMinBadSamples,
                      lookback: '%dm' % (2 * lib.seconds(b.short) / 60),
                    },
                    function(b)
                      local minFor = lib.seconds(cfg.istiodMismatchFor) + lib.seconds(cfg.staleTolerance);
                      if lib.seconds(b['for']) >= minFor then b['for'] else '%dm' % (minFor / 60)),
      },
    ],
  },
}
