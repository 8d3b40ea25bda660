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

  // Causes that make a pod fail to start: the SLI's "bad" events.
  podStartCauses(cfg)::
    std.flattenArrays([
      $.rootCauses(cfg.causeCategories[k])
      for k in std.objectFields(cfg.causeCategories)
      if cfg.causeCategories[k].podStart
    ]),

  // Per-object view of live problems of pods, one series per (cluster, namespace, pod, cause),
  // the kubecause replicas deduplicated by max.
  podView(cfg, causes)::
    std.rstripChars(|||
      max by (%(clusterLabel)s, namespace, pod, cause) (
        label_replace(
          kubecause_object_events{%(kubecauseSelector)s, kind="Pod", %(matcher)s},
          "pod", "$1", "name", "(.+)"
        )
      )
    ||| % (cfg { matcher: $.causeMatcher(causes) }), '\n'),

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
        max by (%(clusterLabel)s, namespace, pod) (kube_pod_status_phase{%(kubeStateMetricsSelector)s, phase="Pending"}) == 1
        or
        max by (%(clusterLabel)s, namespace, pod) (kube_pod_container_status_waiting{%(kubeStateMetricsSelector)s}) == 1
        or
        max by (%(clusterLabel)s, namespace, pod) (kube_pod_init_container_status_waiting{%(kubeStateMetricsSelector)s}) == 1
      )
    ||| % cfg, '\n'),

  // kube-state-metrics state: the pod is not ready or has a waiting container.
  podNotReadyState(cfg)::
    std.rstripChars(|||
      (
        max by (%(clusterLabel)s, namespace, pod) (kube_pod_status_ready{%(kubeStateMetricsSelector)s, condition="false"}) == 1
        or
        max by (%(clusterLabel)s, namespace, pod) (kube_pod_container_status_waiting{%(kubeStateMetricsSelector)s}) == 1
      )
    ||| % cfg, '\n'),

  // Dedupe a kubecause expression over the replicas.
  dedup(cfg, expr):: 'max without (%s) (%s)' % [std.join(', ', cfg.replicaLabels), expr],

  // Seconds of a Prometheus duration such as 5m, 1h, 30d.
  seconds(d)::
    local unit = d[std.length(d) - 1];
    local n = std.parseInt(d[0:std.length(d) - 1]);
    n * { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[unit],

  // Description suffix naming the cluster when the label is set.
  onCluster(cfg):: '{{ with $labels.%(clusterLabel)s }} on cluster {{ . }}{{ end }}' % cfg,

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
