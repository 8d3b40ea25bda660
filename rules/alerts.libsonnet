// Alerts. Every alert names what is affected and why (the cause label), links the runbook
// section of that cause, and resolves when kube-state-metrics shows the problem is gone.
local lib = import 'lib.libsonnet';

{
  local cfg = $._config,
  local cats = cfg.causeCategories,
  local sel = cfg.kubecauseSelector,
  local onCluster = lib.onCluster(cfg),

  // An alert about pods of one cause category: the per-object view (present from the first
  // occurrence) joined with the state that the problem still exists.
  local podCategoryAlert(category, state, forDuration, summary, what) = {
    local cat = cats[category],
    alert: cat.alert,
    expr: |||
      (
      %(view)s
      )
      and on (%(clusterLabel)s, namespace, pod)
      %(state)s
    ||| % (cfg { view: lib.categoryPodView(cfg, cat), state: state }),
    'for': forDuration,
    labels: { severity: 'warning' },
    annotations: {
      summary: summary,
      description: 'Pod {{ $labels.namespace }}/{{ $labels.pod }}%s %s: {{ $labels.cause }} (occurrences on live Events: {{ $value | humanize }}).' % [onCluster, what],
      runbook_url: lib.runbookURL(cfg, cat.alert, '{{ $labels.cause }}'),
    },
  },

  prometheusAlerts+:: {
    groups+: [
      {
        name: 'kubecause-pods',
        rules: [
          podCategoryAlert('volume',
                           lib.podNotStartedState(cfg),
                           cfg.podStartFailingFor,
                           'Pods cannot mount their volumes.',
                           'cannot mount its volumes'),
          podCategoryAlert('sandbox',
                           lib.podNotStartedState(cfg),
                           cfg.podStartFailingFor,
                           'Pod sandboxes cannot be created.',
                           'cannot get a pod sandbox'),
          podCategoryAlert('image',
                           lib.podNotStartedState(cfg),
                           cfg.podStartFailingFor,
                           'Pods cannot pull their images.',
                           'cannot pull an image'),
          podCategoryAlert('probe',
                           lib.podNotReadyState(cfg),
                           cfg.podProbeFailingFor,
                           'Pod probes are failing.',
                           'fails a probe'),
          podCategoryAlert('container',
                           lib.podNotReadyState(cfg),
                           cfg.containerFailingFor,
                           'Containers fail to start or keep crashing.',
                           'has a failing container'),
          {
            alert: cats.eviction.alert,
            expr: |||
              count by (%(clusterLabel)s, namespace, cause) (
                %(view)s  and on (%(clusterLabel)s, namespace, pod)
                max by (%(clusterLabel)s, namespace, pod) (kube_pod_status_reason{%(kubeStateMetricsSelector)s, reason="Evicted"}) == 1
              )
            ||| % (cfg { view: lib.podView(cfg, cats.eviction.causes) }),
            'for': cfg.podEvictedFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Pods were evicted from their nodes.',
              description: '{{ $value | humanize }} pods in namespace {{ $labels.namespace }}%s were evicted: {{ $labels.cause }}.' % onCluster,
              runbook_url: lib.runbookURL(cfg, cats.eviction.alert, '{{ $labels.cause }}'),
            },
          },
          podCategoryAlert('scheduling',
                           'max by (%(clusterLabel)s, namespace, pod) (kube_pod_status_unschedulable{%(kubeStateMetricsSelector)s}) == 1\n' % cfg,
                           cfg.podUnschedulableFor,
                           'Pods cannot be scheduled.',
                           'cannot be scheduled'),
        ],
      },
      {
        name: 'kubecause-storage',
        rules: [
          {
            alert: cats.storage.alert,
            expr: |||
              max by (%(clusterLabel)s, namespace, persistentvolumeclaim, cause) (
                label_replace(
                  kubecause_object_events{%(kubecauseSelector)s, kind="PersistentVolumeClaim", cause=~"%(re)s"},
                  "persistentvolumeclaim", "$1", "name", "(.+)"
                )
              )
              and on (%(clusterLabel)s, namespace, persistentvolumeclaim)
              (max by (%(clusterLabel)s, namespace, persistentvolumeclaim) (kube_persistentvolumeclaim_status_phase{%(kubeStateMetricsSelector)s, phase="Pending"}) == 1)
            ||| % (cfg { re: lib.causeRegex(cats.storage.causes) }),
            'for': cfg.pvcProvisioningFailingFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Persistent volume claims cannot be provisioned.',
              description: 'PVC {{ $labels.namespace }}/{{ $labels.persistentvolumeclaim }}%s stays Pending: {{ $labels.cause }}.' % onCluster,
              runbook_url: lib.runbookURL(cfg, cats.storage.alert, '{{ $labels.cause }}'),
            },
          },
          {
            // S2: a PVC a pod needs stays Pending after its Events expired (or none were sent).
            alert: 'KubecausePVCPending',
            expr: |||
              (
                max by (%(clusterLabel)s, namespace, persistentvolumeclaim) (kube_persistentvolumeclaim_status_phase{%(kubeStateMetricsSelector)s, phase="Pending"}) == 1
                and on (%(clusterLabel)s, namespace, persistentvolumeclaim)
                max by (%(clusterLabel)s, namespace, persistentvolumeclaim) (kube_pod_spec_volumes_persistentvolumeclaims_info{%(kubeStateMetricsSelector)s})
              )
              * on (%(clusterLabel)s, namespace, persistentvolumeclaim) group_left (storageclass)
              max by (%(clusterLabel)s, namespace, persistentvolumeclaim, storageclass) (kube_persistentvolumeclaim_info{%(kubeStateMetricsSelector)s})
              unless on (%(clusterLabel)s, namespace, persistentvolumeclaim)
              label_replace(
                kubecause_object_events{%(kubecauseSelector)s, kind="PersistentVolumeClaim"},
                "persistentvolumeclaim", "$1", "name", "(.+)"
              )
            ||| % cfg,
            'for': cfg.pvcPendingFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Persistent volume claims used by pods stay Pending.',
              description: 'PVC {{ $labels.namespace }}/{{ $labels.persistentvolumeclaim }}%s is used by a pod and has been Pending for %s ({{ with $labels.storageclass }}storage class {{ . }}{{ else }}no storage class{{ end }}).' % [onCluster, cfg.pvcPendingFor],
              runbook_url: lib.runbookURL(cfg, 'KubecausePVCPending'),
            },
          },
          {
            // S19: a deleted PVC that its finalizers keep.
            alert: 'KubecausePVCStuckTerminating',
            expr: |||
              max by (%(clusterLabel)s, namespace, persistentvolumeclaim) (kube_persistentvolumeclaim_deletion_timestamp{%(kubeStateMetricsSelector)s}) > 0
            ||| % cfg,
            'for': cfg.pvcTerminatingFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Persistent volume claims stay Terminating.',
              description: 'PVC {{ $labels.namespace }}/{{ $labels.persistentvolumeclaim }}%s was deleted more than %s ago and still exists: a finalizer keeps it.' % [onCluster, cfg.pvcTerminatingFor],
              runbook_url: lib.runbookURL(cfg, 'KubecausePVCStuckTerminating'),
            },
          },
        ],
      },
      {
        name: 'kubecause-state',
        rules: [
          {
            // S4/S5: containers stuck waiting while no live Event explains why.
            alert: 'KubecauseContainerWaiting',
            expr: |||
              max by (%(clusterLabel)s, namespace, pod, container, reason) (kube_pod_container_status_waiting_reason{%(kubeStateMetricsSelector)s, reason=~"CrashLoopBackOff|CreateContainerError|CreateContainerConfigError|RunContainerError"}) == 1
              unless on (%(clusterLabel)s, namespace, pod)
              label_replace(
                kubecause_object_events{%(kubecauseSelector)s, kind="Pod", cause!="unknown"},
                "pod", "$1", "name", "(.+)"
              )
            ||| % cfg,
            'for': cfg.containerWaitingFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Containers are stuck waiting and no Event explains why.',
              description: 'Container {{ $labels.container }} of pod {{ $labels.namespace }}/{{ $labels.pod }}%s has been waiting in {{ $labels.reason }} for %s.' % [onCluster, cfg.containerWaitingFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseContainerWaiting', '{{ $labels.reason | toLower }}'),
            },
          },
          {
            // S3/S6: a LoadBalancer Service never gets an address (no metalLB or cloud LB).
            alert: 'KubecauseLoadBalancerNoAddress',
            expr: |||
              max by (%(clusterLabel)s, namespace, service) (kube_service_spec_type{%(kubeStateMetricsSelector)s, type="LoadBalancer"}) == 1
              unless on (%(clusterLabel)s, namespace, service)
              max by (%(clusterLabel)s, namespace, service) (kube_service_status_load_balancer_ingress{%(kubeStateMetricsSelector)s})
            ||| % cfg,
            'for': cfg.loadBalancerNoAddressFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'LoadBalancer Services have no external address.',
              description: 'Service {{ $labels.namespace }}/{{ $labels.service }}%s is of type LoadBalancer and has had no ingress address for %s.' % [onCluster, cfg.loadBalancerNoAddressFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseLoadBalancerNoAddress'),
            },
          },
          {
            // S17 (kubelet cannot start, e.g. no pids cgroup) and nodes down in general.
            alert: 'KubecauseNodeNotReady',
            expr: |||
              max by (%(clusterLabel)s, node) (kube_node_status_condition{%(kubeStateMetricsSelector)s, condition="Ready", status=~"false|unknown"}) == 1
            ||| % cfg,
            'for': cfg.nodeNotReadyFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Nodes are not ready.',
              description: 'Node {{ $labels.node }}%s has not been Ready for %s.' % [onCluster, cfg.nodeNotReadyFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseNodeNotReady'),
            },
          },
          {
            // S18: DiskPressure evicts pods; memory and PID pressure likewise.
            alert: 'KubecauseNodePressure',
            expr: |||
              max by (%(clusterLabel)s, node, condition) (kube_node_status_condition{%(kubeStateMetricsSelector)s, condition=~"DiskPressure|MemoryPressure|PIDPressure", status="true"}) == 1
            ||| % cfg,
            'for': cfg.nodePressureFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Nodes report resource pressure and evict pods.',
              description: 'Node {{ $labels.node }}%s has reported {{ $labels.condition }} for %s; the kubelet evicts pods and admits no new ones.' % [onCluster, cfg.nodePressureFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseNodePressure', '{{ $labels.condition | toLower }}'),
            },
          },
        ],
      },
      {
        name: 'kubecause-istiod-remote',
        rules: [
          {
            alert: 'KubecauseIstiodRemoteEndpointsMismatch',
            expr: |||
              max by (%(clusterLabel)s, check, namespace, service) (kubecause_endpoints_state{%(kubecauseSelector)s, %(istiodRemoteSelector)s, state="mismatch"}) == 1
            ||| % cfg,
            'for': cfg.istiodMismatchFor,
            labels: { severity: 'critical' },
            annotations: {
              summary: 'The istiod-remote endpoints point at the wrong addresses.',
              description: 'Endpoints of Service {{ $labels.namespace }}/{{ $labels.service }}%s do not match what check {{ $labels.check }} expects: sidecars and gateways of this cluster cannot reach istiod.' % onCluster,
              runbook_url: lib.runbookURL(cfg, 'KubecauseIstiodRemoteEndpointsMismatch'),
            },
          },
          {
            alert: 'KubecauseIstiodRemoteExpectationUnknown',
            expr: |||
              max by (%(clusterLabel)s, check, namespace, service) (kubecause_endpoints_state{%(kubecauseSelector)s, %(istiodRemoteSelector)s, state="unknown"}) == 1
            ||| % cfg,
            'for': cfg.istiodUnknownFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'The expected istiod-remote endpoints cannot be determined.',
              description: 'Check {{ $labels.check }} cannot tell which addresses Service {{ $labels.namespace }}/{{ $labels.service }}%s should have (hosted istiod pod or its LoadBalancer address missing).' % onCluster,
              runbook_url: lib.runbookURL(cfg, 'KubecauseIstiodRemoteExpectationUnknown'),
            },
          },
          {
            alert: 'KubecauseEndpointCheckFailing',
            expr: |||
              max by (%(clusterLabel)s, check, namespace, service) (kubecause_endpoints_state{%(kubecauseSelector)s, state="error"}) == 1
            ||| % cfg,
            'for': cfg.endpointCheckFailingFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'Endpoint checks cannot be evaluated.',
              description: 'Check {{ $labels.check }} of Service {{ $labels.namespace }}/{{ $labels.service }}%s has been failing for %s.' % [onCluster, cfg.endpointCheckFailingFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseEndpointCheckFailing'),
            },
          },
        ],
      },
      {
        name: 'kubecause-exporter',
        rules: [
          {
            alert: 'KubecauseDown',
            expr: |||
              (sum by (%(clusterLabel)s) (up{%(kubecauseSelector)s}) == 0)
              or
              absent(up{%(kubecauseSelector)s})
            ||| % cfg,
            'for': cfg.exporterDownFor,
            labels: { severity: 'critical' },
            annotations: {
              summary: 'The kubecause exporter is down.',
              description: 'No kubecause replica%s has been scraped successfully for %s: Event causes and istiod-remote checks are not monitored.' % [onCluster, cfg.exporterDownFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseDown'),
            },
          },
          {
            alert: 'KubecauseWatchFailing',
            expr: |||
              min by (%(clusterLabel)s, instance, pod) (kubecause_watch_up{%(kubecauseSelector)s}) == 0
            ||| % cfg,
            'for': cfg.watchFailingFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'The kubecause exporter cannot watch Events.',
              description: 'kubecause {{ $labels.instance }}%s has not been able to list or watch Events for %s.' % [onCluster, cfg.watchFailingFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseWatchFailing'),
            },
          },
          {
            alert: 'KubecauseSeriesCapReached',
            expr: |||
              max by (%(clusterLabel)s, metric) (rate(kubecause_series_dropped_total{%(kubecauseSelector)s}[15m])) > 0
            ||| % cfg,
            'for': cfg.seriesCapFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: 'The kubecause exporter drops series because a cap is reached.',
              description: 'kubecause%s drops new label sets of {{ $labels.metric }} ({{ $value | humanize }}/s): the cap is reached.' % onCluster,
              runbook_url: lib.runbookURL(cfg, 'KubecauseSeriesCapReached'),
            },
          },
          {
            alert: cats.other.alert,
            expr: |||
              (
                sum by (%(clusterLabel)s) (%(unknownRate)s)
                /
                sum by (%(clusterLabel)s) (%(allRate)s)
              ) > %(unclassifiedRatioThreshold)s
              and on (%(clusterLabel)s)
              sum by (%(clusterLabel)s) (%(allIncrease)s) > %(unclassifiedMinOccurrences)s
            ||| % (cfg {
                     unknownRate: lib.dedup(cfg, 'rate(kubecause_events_total{%s, cause="unknown"}[1h])' % sel),
                     allRate: lib.dedup(cfg, 'rate(kubecause_events_total{%s}[1h])' % sel),
                     allIncrease: lib.dedup(cfg, 'increase(kubecause_events_total{%s}[1h])' % sel),
                   }),
            'for': cfg.unclassifiedFor,
            labels: { severity: 'info' },
            annotations: {
              summary: 'Many Events match no rule of the cause table.',
              description: '{{ $value | humanizePercentage }} of the Event occurrences%s in the last hour have cause unknown.' % onCluster,
              runbook_url: lib.runbookURL(cfg, cats.other.alert, 'unknown'),
            },
          },
        ],
      },
    ],
  },
}
