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

  local podStartBad(w) = lib.podStartBad(cfg, w),

  local podStartsRecord(w) = 'cluster:kubecause_pod_starts:count%s' % w,
  local podStartErrorRecord(w) = 'cluster:kubecause_pod_start_error:ratio_rate%s' % w,
  local istiodErrorRecord(w) = 'cluster:kubecause_istiod_remote_error:ratio_rate%s' % w,

  // guard(long window) is an optional extra condition, e.g. a minimum number of events in the window.
  local burnAlert(name, record, target, what, guard=null) = [
    {
      alert: name,
      expr: |||
              %(record)s%(long)s > (%(factor)s * (1 - %(target)s))
              and
              %(record)s%(short)s > (%(factor)s * (1 - %(target)s))
            ||| % (b { record: record, target: std.format('%g', target), factor: std.format('%g', b.factor) })
            + (if guard == null then '' else guard(b.long)),
      'for': b['for'],
      labels: { severity: b.severity, long: b.long, short: b.short },
      annotations: {
        summary: 'The %s SLO burns its error budget too fast.' % what,
        description: 'The %s error ratio%s over the last %s is {{ $value | humanizePercentage }}: %s times the rate that spends the %s error budget of a %s target.' % [what, lib.onCluster(cfg), b.long, std.format('%g', b.factor), cfg.sloWindow, std.format('%g', target)],
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
        name: 'kubecause-slo-pod-start',
        rules: [
          {
            record: podStartsRecord(w),
            expr: |||
              count by (%(cl)s) (
                max by (%(cl)s, namespace, pod, uid) (last_over_time(kube_pod_start_time{%(ksm)s}[%(w)s])) > time() - %(s)d
              )
            ||| % { cl: cl, ksm: ksm, w: w, s: lib.seconds(w) },
          }
          for w in cfg.sloRecordWindows
        ] + [
          {
            record: podStartErrorRecord(w),
            expr: |||
              clamp_max(
                (
                  %(bad)s    or
                  0 * %(total)s
                )
                / %(total)s,
                1
              )
            ||| % { bad: podStartBad(w), total: podStartsRecord(w) },
          }
          for w in cfg.sloRecordWindows
        ],
      },
      {
        name: 'kubecause-slo-istiod-remote',
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
        ],
      },
    ],
  },

  prometheusAlerts+:: {
    groups+: [
      {
        name: 'kubecause-slo',
        rules:
          // A ratio over a handful of pod starts says little: one failing pod in a small cluster
          // is a 100 % error ratio. The per-cause alerts name that pod; the burn alert waits for
          // podStartSLOMinStarts starts in its long window.
          burnAlert('KubecausePodStartErrorBudgetBurn',
                    'cluster:kubecause_pod_start_error:ratio_rate',
                    cfg.podStartSLOTarget,
                    'pod-start',
                    function(long) |||
                      and on (%(cl)s)
                      %(starts)s >= %(min)d
                    ||| % { cl: cl, starts: podStartsRecord(long), min: cfg.podStartSLOMinStarts }) +
          burnAlert('KubecauseIstiodRemoteErrorBudgetBurn',
                    'cluster:kubecause_istiod_remote_error:ratio_rate',
                    cfg.istiodRemoteSLOTarget,
                    'istiod-remote endpoints'),
      },
    ],
  },
}
