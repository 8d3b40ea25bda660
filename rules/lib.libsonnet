// Helpers shared by the alerts, the recording rules and the dashboards.
{
  // runbook_url of an alert: the page is the alert name in lower case; anchor is a section
  // (a cause name, or a template such as '{{ $labels.cause }}').
  runbookURL(cfg, alert, anchor=''):: (cfg.runbookURLPattern % std.asciiLower(alert)) + (if anchor != '' then '#' + anchor else ''),

  // Regular expression matching any of the given causes.
  causeRegex(causes):: std.join('|', causes),

  // Label matcher selecting the given causes.
  causeMatcher(causes)::
    if std.length(causes) == 1 then 'cause="%s"' % causes[0] else 'cause=~"%s"' % $.causeRegex(causes),

  // Root causes of a category (symptoms left out).
  rootCauses(cat):: [c for c in cat.causes if !std.member(cat.symptoms, c)],

  // Causes that count against the pod-start SLO: platform root causes (from the cause table).
  podStartCauses(cfg):: cfg.podStartSLOCauses,

  // A series read so that a scrape gap up to staleTolerance (an exporter restarting) does not
  // make it vanish: the last sample within the window. A 0/1 gauge that turns 0 does so at once.
  tolerant(cfg, series):: 'last_over_time(%s[%s])' % [series, cfg.staleTolerance],

  // A kube-state-metrics series, selector added, read through tolerant().
  ksm(cfg, metric, matchers=''):: $.tolerant(cfg, '%s{%s%s}' % [metric, cfg.kubeStateMetricsSelector, if matchers == '' then '' else ', ' + matchers]),

  // Per-object view of live problems of pods, one series per (cluster, namespace, pod, cause),
  // the kubecause replicas deduplicated by max.
  podView(cfg, causes)::
    std.rstripChars(|||
      max by (%(clusterLabel)s, namespace, pod, cause) (
        label_replace(
          %(series)s,
          "pod", "$1", "name", "(.+)"
        )
      )
    ||| % (cfg { series: $.tolerant(cfg, 'kubecause_object_events{%s, kind="Pod", %s}' % [cfg.kubecauseSelector, $.causeMatcher(causes)]) }), '\n'),

  // The view of a category: root causes, plus symptoms of pods that show no root cause.
  categoryPodView(cfg, cat)::
    local roots = $.rootCauses(cat);
    if std.length(cat.symptoms) == 0 then $.podView(cfg, roots)
    else
      std.rstripChars(|||
        %(roots)s
        or
        (
        %(symptoms)s
          unless on (%(clusterLabel)s, namespace, pod)
        %(roots)s
        )
      ||| % (cfg {
               roots: $.podView(cfg, roots),
               symptoms: $.podView(cfg, cat.symptoms),
             }), '\n'),

  // kube-state-metrics state: the pod has not started all its containers yet.
  podNotStartedState(cfg)::
    std.rstripChars(|||
      (
        max by (%(clusterLabel)s, namespace, pod) (%(pending)s) == 1
        or
        max by (%(clusterLabel)s, namespace, pod) (%(waiting)s) == 1
        or
        max by (%(clusterLabel)s, namespace, pod) (%(initWaiting)s) == 1
      )
    ||| % (cfg {
             pending: $.ksm(cfg, 'kube_pod_status_phase', 'phase="Pending"'),
             waiting: $.ksm(cfg, 'kube_pod_container_status_waiting'),
             initWaiting: $.ksm(cfg, 'kube_pod_init_container_status_waiting'),
           }), '\n'),

  // kube-state-metrics state: the pod was not ready, or had a waiting container, at some point
  // of the last flapWindow, it still exists, and it has not been Ready since recoveredAfter. A container that crashes about a minute after
  // each start flips Ready and waiting on and off; an instant test would reset `for:` at every
  // flip (kubernetes-mixin's KubePodCrashLooping uses max_over_time for the same reason).
  podFlappingNotReadyState(cfg)::
    std.rstripChars(|||
      (
        (
          max by (%(clusterLabel)s, namespace, pod) (max_over_time(kube_pod_status_ready{%(kubeStateMetricsSelector)s, condition="false"}[%(flapWindow)s])) == 1
          or
          max by (%(clusterLabel)s, namespace, pod) (max_over_time(kube_pod_container_status_waiting{%(kubeStateMetricsSelector)s}[%(flapWindow)s])) == 1
        )
        and on (%(clusterLabel)s, namespace, pod)
        max by (%(clusterLabel)s, namespace, pod) (%(info)s)
        unless on (%(clusterLabel)s, namespace, pod)
        %(recovered)s
      )
    ||| % (cfg { info: $.ksm(cfg, 'kube_pod_info'), recovered: $.podRecovered(cfg) }), '\n'),

  // kube-state-metrics state: the pod has been Ready without interruption for recoveredAfter.
  // A crash loop never gets there (its container runs about a minute at most between crashes),
  // a fixed pod does: its alerts resolve then, not a whole flapWindow later.
  podRecovered(cfg)::
    '(max by (%(clusterLabel)s, namespace, pod) (min_over_time(kube_pod_status_ready{%(kubeStateMetricsSelector)s, condition="true"}[%(recoveredAfter)s])) == 1)' % cfg,

  // Adds node, workload_type and workload (from the recording rule podWorkloadRecord) to a
  // per-pod expression; a pod kube-state-metrics does not (yet) know keeps its alert, unlabelled.
  withPodWorkload(cfg, expr)::
    std.rstripChars(|||
      (
      %(expr)s
      )
      * on (%(clusterLabel)s, namespace, pod) group_left (node, workload_type, workload)
      %(record)s
      or
      (
      %(expr)s
      )
      unless on (%(clusterLabel)s, namespace, pod)
      %(record)s
    ||| % (cfg { expr: expr, record: $.podWorkloadRecord }), '\n'),

  // Recording rule: one series per pod with its node and owning workload (the Deployment of a
  // ReplicaSet-owned pod), value 1.
  podWorkloadRecord:: 'namespace_pod:kubecause_pod_workload:info',

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

  // Description suffix naming the node and the workload of a pod alert when known.
  podWhere(cfg):: $.t(cfg,
                      '{{ with $labels.node }} on node {{ . }}{{ end }}{{ with $labels.workload }} ({{ $labels.workload_type }} {{ . }}){{ end }}',
                      '{{ with $labels.node }}（节点 {{ . }}）{{ end }}{{ with $labels.workload }}（{{ $labels.workload_type }} {{ . }}）{{ end }}'),

  // Pod-start SLI, bad events over window w: pods that began to show a pod-start root cause.
  // increase() for series that existed w ago; a series born inside the window counts with
  // its whole value (increase() cannot see the first increment of a new series).
  podStartBad(cfg, w)::
    local x = 'kubecause_objects_affected_total{%s, kind="Pod", %s}' % [cfg.kubecauseSelector, $.causeMatcher($.podStartCauses(cfg))];
    |||
      sum by (%(cl)s) (
        %(dedup)s
      )
    ||| % {
      cl: cfg.clusterLabel,
      dedup: $.dedup(cfg, '\n    (increase(%(x)s[%(w)s]) and %(x)s offset %(w)s)\n    or\n    (max_over_time(%(x)s[%(w)s]) unless %(x)s offset %(w)s)\n  ' % { x: x, w: w }),
    },
}
