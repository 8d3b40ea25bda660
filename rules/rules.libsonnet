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

  // One series per object of a kind (kind and name labels) whose state expr (by objLabel) holds.
  local objectState(kind, objLabel, expr) =
    'label_replace(label_replace(%s, "kind", "%s", "", ""), "name", "$1", "%s", "(.+)")' % [expr, kind, objLabel],

  // The workload events (rec.workloadEvents) of a kind (ReplicaSet, Job) whose owner (a
  // Deployment, a CronJob) is the workload, with that workload's labels.
  local ownedBy(kind, objLabel, ownerMetric) = std.rstripChars(|||
    label_replace(label_replace(
      label_replace(%(events)s{kind="%(kind)s"}, "%(obj)s", "$1", "name", "(.+)")
      * on (%(cl)s, namespace, %(obj)s) group_left (owner_kind, owner_name)
      topk by (%(cl)s, namespace, %(obj)s) (1, max by (%(cl)s, namespace, %(obj)s, owner_kind, owner_name) (%(owner)s)),
      "workload_type", "$1", "owner_kind", "(.+)"), "workload", "$1", "owner_name", "(.+)")
  ||| % {
    cl: cl,
    kind: kind,
    obj: objLabel,
    events: rec.workloadEvents,
    owner: lib.ksm(cfg, ownerMetric, 'owner_kind!="", owner_kind!="<none>"'),
  }, '\n'),

  // Pods owned by a kind (ReplicaSet, Job) whose own owner is the workload (Deployment,
  // CronJob): kube_pod_owner joined with that kind's owner metric, whose label naming the
  // owned object is objLabel.
  local ownerOfOwner(kind, objLabel, ownerMetric) = std.rstripChars(|||
    max by (%(cl)s, namespace, pod, workload_type, workload) (
          max by (%(cl)s, namespace, pod, %(obj)s) (
            label_replace(%(podOwner)s, "%(obj)s", "$1", "owner_name", "(.+)")
          )
          * on (%(cl)s, namespace, %(obj)s) group_left (workload_type, workload)
          topk by (%(cl)s, namespace, %(obj)s) (1, max by (%(cl)s, namespace, %(obj)s, workload_type, workload) (
            label_replace(label_replace(%(owner)s,
              "workload_type", "$1", "owner_kind", "(.+)"), "workload", "$1", "owner_name", "(.+)")
          ))
        )
  ||| % {
    cl: cl,
    obj: objLabel,
    podOwner: lib.ksm(cfg, 'kube_pod_owner', 'owner_kind="%s"' % kind),
    owner: lib.ksm(cfg, ownerMetric, 'owner_kind!="", owner_kind!="<none>"'),
  }, '\n'),

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

  prometheusRules+:: {
    groups+: [
      {
        name: 'kubecause-aggregates',
        rules: [
          {
            record: 'namespace_kind_cause:kubecause_events:rate5m',
            expr: |||
              sum by (%(cl)s, namespace, kind, cause) (
                %(r)s
              )
            ||| % { cl: cl, r: lib.dedup(cfg, 'rate(kubecause_events_total{%s}[5m])' % sel) },
          },
          {
            record: 'namespace_kind_cause:kubecause_objects_affected:increase1h',
            expr: |||
              sum by (%(cl)s, namespace, kind, cause) (
                %(r)s
              )
            ||| % { cl: cl, r: lib.dedup(cfg, 'increase(kubecause_objects_affected_total{%s}[1h])' % sel) },
          },
        ],
      },
      {
        // The state every pod alert and the SLO read, one home for each: which state source
        // is missing, each pod's workload, state, causes and whether it is failing. The alerts
        // select from these records and read in a few lines. Rules of a group run in order, so
        // each record reads the ones above it at the same evaluation.
        name: 'kubecause-pod-workload',
        rules: [
          {
            record: lib.stateMissingRecord,
            expr: lib.stateMissing(cfg),
          },
          {
            // The cause table's properties, held like the pods' state while kubecause is missing.
            record: rec.causeInfo,
            expr: lib.held(cfg, rec.causeInfo, lib.causeInfo(cfg)),
          },
          {
            // The workload that owns a pod, one series per pod: the owner of its ReplicaSet (a
            // Deployment) or of its Job (a CronJob), or else its own owner (StatefulSet,
            // DaemonSet, Job, the Node of a static pod).
            record: rec.podOwner,
            expr: |||
              topk by (%(cl)s, namespace, pod) (1,
                %(viaReplicaSet)s
                or
                %(viaJob)s
                or
                max by (%(cl)s, namespace, pod, workload_type, workload) (
                  label_replace(label_replace(
                    %(owner)s
                    unless on (%(cl)s, namespace, pod)
                    (label_replace(%(jobPod)s, "job_name", "$1", "owner_name", "(.+)") and on (%(cl)s, namespace, job_name) %(jobOwner)s),
                    "workload_type", "$1", "owner_kind", "(.+)"), "workload", "$1", "owner_name", "(.+)")
                )
              )
            ||| % {
              cl: cl,
              viaReplicaSet: ownerOfOwner('ReplicaSet', 'replicaset', 'kube_replicaset_owner'),
              viaJob: ownerOfOwner('Job', 'job_name', 'kube_job_owner'),
              owner: lib.ksm(cfg, 'kube_pod_owner', 'owner_kind!="ReplicaSet", owner_kind!="", owner_kind!="<none>"'),
              jobPod: lib.ksm(cfg, 'kube_pod_owner', 'owner_kind="Job"'),
              jobOwner: lib.ksm(cfg, 'kube_job_owner', 'owner_kind!="", owner_kind!="<none>"'),
            },
          },
          {
            // One series per pod with its node and workload, value 1. A pod without owner, or
            // owned by a ReplicaSet without owner, is its own workload.
            record: rec.podWorkload,
            expr: |||
              max by (%(cl)s, namespace, pod, node, workload_type, workload) (
                (
                  # The node of the pod now; during a scrape gap or after the pod went, the
                  # last one seen. A pod that got its node inside that window was seen without
                  # it too: the node it got wins, or the pod would have two series here and
                  # every join on this record would fail until the window passed.
                  max by (%(cl)s, namespace, pod, node) (kube_pod_info{%(ksm)s})
                  or
                  (
                    (
                      max by (%(cl)s, namespace, pod, node) (%(podInfoScheduled)s)
                      or on (%(cl)s, namespace, pod)
                      max by (%(cl)s, namespace, pod, node) (%(podInfo)s)
                    )
                    unless on (%(cl)s, namespace, pod) kube_pod_info{%(ksm)s}
                  )
                )
                * on (%(cl)s, namespace, pod) group_left (workload_type, workload)
                (
                  %(owner)s
                  or
                  label_replace(label_replace(
                    max by (%(cl)s, namespace, pod) (%(podInfo)s),
                    "workload_type", "Pod", "", ""), "workload", "$1", "pod", "(.+)")
                  unless on (%(cl)s, namespace, pod)
                  %(owner)s
                )
              )
            ||| % { cl: cl, ksm: ksm, podInfo: lib.ksm(cfg, 'kube_pod_info'), podInfoScheduled: lib.ksm(cfg, 'kube_pod_info', 'node!=""'), owner: rec.podOwner },
          },
        ] + [
          {
            record: rec.state[k],
            expr: lib.podState(cfg)[k],
          }
          for k in ['notStarted', 'unhealthy', 'unschedulable', 'terminated']
        ] + [
          {
            record: rec.podEvents,
            expr: |||
              max by (%(cl)s, namespace, pod, cause, target) (
                label_replace(%(view)s, "pod", "$1", "name", "(.+)")
              )
            ||| % { cl: cl, view: lib.tolerant(cfg, 'kubecause_object_events{%s, kind="Pod"}' % sel) },
          },
          {
            // A pod's root causes (cause table: symptom false) of the pod categories, and its
            // symptoms only when it has none.
            record: rec.podRoots,
            expr: lib.withCause(cfg, rec.podEvents, 'symptom="false", %s' % podCats) + '\n',
          },
          {
            record: rec.podCauses,
            expr: |||
              (
                %(roots)s
                or
                (%(symptoms)s unless on (%(cl)s, namespace, pod) %(roots)s)
              )
              unless on (%(cl)s, namespace, pod, cause)
              %(oomLoop)s
              or
              label_replace(%(oomLoop)s, "cause", "%(oomCause)s", "", "")
            ||| % {
              cl: cl,
              roots: rec.podRoots,
              symptoms: lib.withCause(cfg, rec.podEvents, 'symptom="true", %s' % podCats),
              // A crash loop of a container the kernel OOM-killed last time and restarted within
              // oomWindow is named by kube-state-metrics' reason, not by an Event.
              oomLoop: '(%(events)s{cause="%(loop)s"} and on (%(cl)s, namespace, pod) %(oom)s)' % {
                cl: cl,
                events: rec.podEvents,
                loop: cfg.oomRefines.from,
                oom: std.rstripChars(|||
                  max by (%(cl)s, namespace, pod) (
                    %(reason)s == 1
                    and on (%(cl)s, namespace, pod, container)
                    increase(kube_pod_container_status_restarts_total{%(ksm)s}[%(w)s]) > 0
                  )
                ||| % { cl: cl, ksm: ksm, w: cfg.oomWindow, reason: lib.ksm(cfg, 'kube_pod_container_status_last_terminated_reason', 'reason="OOMKilled"') }, '\n'),
              },
              oomCause: cfg.oomRefines.to,
            },
          },
          {
            // A live cause whose category's state holds on the pod.
            record: rec.podCauseInState,
            expr: |||
              %(union)s
            ||| % {
              union: std.join('\nor\n', [
                '(%s * on (%s, cause) group_left (symptom_of) %s{category="%s"} and on (%s, namespace, pod) %s)' % [rec.podCauses, cl, rec.causeInfo, k, cl, rec.state[cats[k].state]]
                for k in cfg.podCategories
              ]),
            },
          },
          {
            // The same with the pod's node and workload. A pod kube-state-metrics does not (yet)
            // list in kube_pod_info keeps its series, without them.
            record: rec.podFailing,
            expr: lib.held(cfg, rec.podFailing, |||
              %(inState)s * on (%(cl)s, namespace, pod) group_left (node, workload_type, workload) %(workload)s
              or
              %(inState)s unless on (%(cl)s, namespace, pod) %(workload)s
            ||| % { cl: cl, inState: rec.podCauseInState, workload: rec.podWorkload }),
          },
          {
            // Nodes whose pressure alert fires: the evictions on them are its detail
            // (KubecausePodEvicted). Read from the alert itself (ALERTS), not from a copy of its
            // condition, so that "the pressure paged" and "the evictions are explained" cannot
            // disagree at the edges of its `for` and holds (a DiskPressure of 9m41s at load paged,
            // while a copy of the condition did not yet hold, and the evictions paged after it).
            record: rec.nodePressureHeld,
            expr: |||
              max by (%(cl)s, node) (ALERTS{alertname="%(alert)s", alertstate="firing"})
            ||| % { cl: cl, alert: if cfg.kubernetesMixinInstalled then 'KubeNodePressure' else 'KubecauseNodePressure' },
          },
          {
            // Workloads failing per platform cause and shared target: the incident's measure.
            // Causes whose target is a node (the cause table's `target: node`) also get the
            // `node` label, so that the node's own alerts and the incident can inhibit each other.
            record: rec.incidentWorkloads,
            expr: |||
              label_replace(
                %(nodeCount)s,
                "node", "$1", "target", "(.+)"
              )
              or
              %(otherCount)s
            ||| % {
              local count(props) = 'count by (%(cl)s, cause, target) (count by (%(cl)s, cause, target, namespace, workload_type, workload) (%(failing)s))' % {
                cl: cl,
                failing: lib.withCause(cfg, '%s{target!=""}' % rec.podFailing, lib.podStartProps + ', ' + props),
              },
              nodeCount: count('target_kind="node"'),
              otherCount: count('target_kind!="node"'),
            },
          },
          {
            // Controllers that cannot create their pods or gave up (cause category workload),
            // on objects still short of ready pods (ReplicaSet, StatefulSet, DaemonSet) or
            // unfinished (Job). It resolves when the controller has created its pods.
            record: rec.workloadEvents,
            expr: |||
              max by (%(cl)s, namespace, kind, name, cause, target) (%(events)s)
              and on (%(cl)s, cause) %(info)s{category="workload"}
              and on (%(cl)s, namespace, kind, name)
              (
                %(short)s
              )
            ||| % {
              cl: cl,
              info: rec.causeInfo,
              events: lib.tolerant(cfg, 'kubecause_object_events{%s, kind=~"ReplicaSet|StatefulSet|DaemonSet|Job"}' % sel),
              short: std.join('\n  or\n  ', [
                objectState('ReplicaSet', 'replicaset', 'max by (%s, namespace, replicaset) (%s) > max by (%s, namespace, replicaset) (%s)' % [cl, lib.ksm(cfg, 'kube_replicaset_spec_replicas'), cl, lib.ksm(cfg, 'kube_replicaset_status_ready_replicas')]),
                objectState('StatefulSet', 'statefulset', 'max by (%s, namespace, statefulset) (%s) > max by (%s, namespace, statefulset) (%s)' % [cl, lib.ksm(cfg, 'kube_statefulset_replicas'), cl, lib.ksm(cfg, 'kube_statefulset_status_replicas_ready')]),
                objectState('DaemonSet', 'daemonset', 'max by (%s, namespace, daemonset) (%s) > max by (%s, namespace, daemonset) (%s)' % [cl, lib.ksm(cfg, 'kube_daemonset_status_desired_number_scheduled'), cl, lib.ksm(cfg, 'kube_daemonset_status_number_available')]),
                objectState('Job', 'job_name', 'max by (%s, namespace, job_name) (%s) unless on (%s, namespace, job_name) max by (%s, namespace, job_name) (%s) == 1' % [cl, lib.ksm(cfg, 'kube_job_info'), cl, cl, lib.ksm(cfg, 'kube_job_complete', 'condition="true"')]),
              ]),
            },
          },
          {
            // The same objects when a workload owns them: a ReplicaSet's Deployment, a Job's
            // CronJob (workload_type and workload labels added).
            record: rec.workloadOwned,
            expr: |||
              %(viaRS)s
              or
              %(viaJob)s
            ||| % {
              viaRS: ownedBy('ReplicaSet', 'replicaset', 'kube_replicaset_owner'),
              viaJob: ownedBy('Job', 'job_name', 'kube_job_owner'),
            },
          },
          {
            // Per workload the user manages: the owner where there is one, else the object.
            record: rec.workloadFailing,
            expr: lib.held(cfg, rec.workloadFailing, |||
              max by (%(cl)s, namespace, workload_type, workload, cause, target) (
                %(owned)s
                or
                label_replace(label_replace(%(events)s, "workload_type", "$1", "kind", "(.+)"), "workload", "$1", "name", "(.+)")
                unless on (%(cl)s, namespace, kind, name)
                %(owned)s
              )
            ||| % { cl: cl, owned: rec.workloadOwned, events: rec.workloadEvents }),
          },
        ] + (if cfg.kubernetesMixinInstalled then [] else [
               {
                 // Containers waiting that no live cause explains (KubecauseContainerWaiting).
                 record: rec.containerWaitingUnexplained,
                 expr: lib.held(cfg, rec.containerWaitingUnexplained, lib.objectState(cfg).containerWaitingUnexplained),
               },
             ]) + [
          {
            // Pods that have not started and show a platform root cause now: while there are
            // some, the outage goes on even when no new pod starts (the short window of the
            // burn alerts would otherwise see no starts and resolve while pods are broken).
            record: podStartStuckRecord,
            expr: |||
              count by (%(cl)s) (
                max by (%(cl)s, namespace, pod) (%(failing)s)
              )
            ||| % { cl: cl, failing: lib.withCause(cfg, rec.podFailing, lib.podStartProps) },
          },
        ],
      },
      {
        // The state the claim, Service and node alerts read, held like the pods' while a state
        // source is missing (lib.held, which reads which source is missing itself here: a
        // record of another group is read out of step).
        name: 'kubecause-alert-state',
        rules: [
          { record: rec[k], expr: lib.held(cfg, rec[k], lib.objectState(cfg)[k], inline=true) }
          for k in ['pvcProvisioningFailing', 'pvcPendingUnexplained', 'pvcTerminating']
                   + (if cfg.kubernetesMixinInstalled then [] else ['nodeNotReady', 'nodePressure'])
                   + (if cfg.ingressByNodePort then [] else ['loadBalancerNoAddress'])
        ],
      },
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
