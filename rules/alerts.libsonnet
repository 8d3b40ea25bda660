// Alerts. Every alert names what is affected and why (the cause label), links the runbook
// section of that cause, and resolves when kube-state-metrics shows the problem is gone.
local lib = import 'lib.libsonnet';

{
  local cfg = $._config,
  local cats = cfg.causeCategories,
  local sel = cfg.kubecauseSelector,
  local onCluster = lib.onCluster(cfg),

  // An alert about pods of one cause category: the pods failing now (the recording rule
  // lib.records.podFailing: a live cause of the category whose state holds, with the pod's
  // node and workload) whose cause is one of the category's.
  local podCategoryAlert(category, summary, what) = {
    local cat = cats[category],
    alert: cat.alert,
    // Unless a known outside problem explains the pod's failures of the category.
    // Not the pods of a CronJob's runs: KubecauseCronJobFailing names them, once per CronJob.
    expr: lib.withCause(cfg, '%s > 0' % lib.records.podFailing, 'category="%s"' % category)
          + '\nunless on (%s, namespace, pod) %s{category="%s"}\n' % [cfg.clusterLabel, lib.records.podExplained, category]
          + lib.unlessCronJob(cfg),
    'for': cat['for'],
    // A firing alert rides out a short gap of its series (exporter restart) instead of
    // resolving and paging again.
    keep_firing_for: cfg.staleTolerance,
    labels: { severity: 'warning' },
    annotations: {
      summary: summary,
      description: lib.t(cfg, 'Pod {{ $labels.namespace }}/{{ $labels.pod }}%s%s %s: {{ $labels.cause }}%s (occurrences on live Events: {{ $value | humanize }}).', 'Pod {{ $labels.namespace }}/{{ $labels.pod }}%s%s%s：{{ $labels.cause }}%s（存活事件中的发生次数：{{ $value | humanize }}）。') % [onCluster, lib.podWhere(cfg), what, lib.onTarget(cfg)],
      runbook_url: lib.causeRunbookURL(cfg, lib.runbookURL(cfg, cat.alert)),
    },
  },

  prometheusAlerts+:: {
    groups+: [
      {
        name: 'kubecause-pods',
        rules: [
          podCategoryAlert('volume',
                           lib.t(cfg, 'Pods cannot mount their volumes.', 'Pod 无法挂载其卷。'),
                           lib.t(cfg, 'cannot mount its volumes', '无法挂载其卷')),
          podCategoryAlert('sandbox',
                           lib.t(cfg, 'Pods cannot be set up on their nodes.', 'Pod 无法在其节点上完成创建。'),
                           lib.t(cfg, 'cannot be set up on its node', '无法在其节点上完成创建')),
          podCategoryAlert('image',
                           lib.t(cfg, 'Pods cannot pull their images.', 'Pod 无法拉取镜像。'),
                           lib.t(cfg, 'cannot pull an image', '无法拉取镜像')),
          podCategoryAlert('probe',
                           lib.t(cfg, 'Pod probes are failing.', 'Pod 探针失败。'),
                           lib.t(cfg, 'fails a probe', '探针失败')),
          podCategoryAlert('container',
                           lib.t(cfg, 'Containers fail to start or keep crashing.', '容器无法启动或反复崩溃。'),
                           lib.t(cfg, 'has a failing container', '有容器失败')),
          // Evicted pods that still exist and have terminated, per node and namespace: a node
          // under pressure evicts many pods at once, one notification names the node. A node
          // whose pressure alert fired in the last evictionsExplainedFor explains its
          // evictions: they do not page after it, whenever it clears.
          {
            alert: cats.eviction.alert,
            expr: |||
              count by (%(clusterLabel)s, node, namespace, cause) (%(failing)s) > 0
              unless on (%(clusterLabel)s, node)
              max_over_time(%(held)s[%(evictionsExplainedFor)s])
            ||| % (cfg { failing: lib.withCause(cfg, lib.records.podFailing, 'category="eviction"'), held: lib.records.nodePressureHeld }),
            'for': cats.eviction['for'],
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'Pods were evicted from their nodes.', 'Pod 被从节点驱逐。'),
              description: lib.t(cfg, '{{ $value | humanize }} pods in namespace {{ $labels.namespace }}%s were evicted from node {{ $labels.node }}: {{ $labels.cause }}.', '命名空间 {{ $labels.namespace }}%s 中有 {{ $value | humanize }} 个 Pod 被从节点 {{ $labels.node }} 驱逐：{{ $labels.cause }}。') % onCluster,
              runbook_url: lib.causeRunbookURL(cfg, lib.runbookURL(cfg, cats.eviction.alert)),
            },
          },
          podCategoryAlert('scheduling',
                           lib.t(cfg, 'Pods cannot be scheduled.', 'Pod 无法调度。'),
                           lib.t(cfg, 'cannot be scheduled', '无法调度')),
          // Pods of several workloads that cannot start for one platform cause (podStart:
          // platform: not a workload's own mistake) on one shared target (a registry, a CNI
          // plugin, a CSI driver, a node): one incident.
          // Its `for` is shorter than the per-pod alerts', which it inhibits (equal cluster,
          // cause, target), so they never notify on their own.
          {
            alert: 'KubecauseIncident',
            expr: |||
              %(rec)s >= %(min)d
              or
              (%(rec)s and max_over_time(%(rec)s[%(hold)s]) >= %(min)d)
            ||| % { rec: lib.records.incidentWorkloads, min: cfg.incidentMinWorkloads, hold: cfg.incidentHoldFor },
            'for': cfg.incidentFor,
            keep_firing_for: cfg.staleTolerance,
            labels: { severity: cfg.incidentSeverity },
            annotations: {
              summary: lib.t(cfg, 'Pods of several workloads fail for one cause.', '多个工作负载的 Pod 因同一原因失败。'),
              description: lib.t(cfg, '{{ $labels.cause }} on {{ $labels.target }}%(onCluster)s: %(pods)s of {{ $value | humanize }} workloads fail. The per-pod alerts of this cause and target are inhibited; the runbook of the cause: %(causeRunbook)s', '{{ $labels.cause }}（{{ $labels.target }}）%(onCluster)s：{{ $value | humanize }} 个工作负载的 %(podsZh)s失败。该原因和目标的单个 Pod 告警已被抑制；该原因的运行手册：%(causeRunbook)s') % {
                onCluster: onCluster,
                // The pods failing, or (an incident shown by claims) the claims.
                local q = '{{ with printf "count(%s{%s=%%q, cause=%%q, target=%%q})" $labels.%s $labels.cause $labels.target | query }}' % [lib.records.podFailing, cfg.clusterLabel, cfg.clusterLabel],
                pods: q + '{{ . | first | value | humanize }} pods{{ else }}the claims{{ end }}',
                podsZh: q + '{{ . | first | value | humanize }} 个 Pod {{ else }}PVC {{ end }}',
                causeRunbook: lib.causeRunbookURL(cfg, lib.runbookURL(cfg, 'KubecauseIncident')),
              },
              runbook_url: lib.runbookURL(cfg, 'KubecauseIncident'),
            },
          },
          // A controller cannot create a workload's pods, or a Job gave up: the workload has no
          // pod to alert on, its controller's Event says why.
          {
            alert: cats.workload.alert,
            expr: '%s > 0\n' % lib.records.workloadFailing + lib.unlessCronJob(cfg),
            'for': cats.workload['for'],
            keep_firing_for: cfg.staleTolerance,
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'Controllers cannot create the pods of workloads, or Jobs failed.', '控制器无法为工作负载创建 Pod，或 Job 失败。'),
              description: lib.t(cfg, '{{ $labels.workload_type }} {{ $labels.namespace }}/{{ $labels.workload }}%s: {{ $labels.cause }}%s.', '{{ $labels.workload_type }} {{ $labels.namespace }}/{{ $labels.workload }}%s：{{ $labels.cause }}%s。') % [onCluster, lib.onTarget(cfg)],
              runbook_url: lib.causeRunbookURL(cfg, lib.runbookURL(cfg, cats.workload.alert)),
            },
          },
          // The runs of a CronJob fail (their pods, or the Jobs themselves): one alert per
          // CronJob, naming the cause first seen, kept between runs, resolved when a run
          // succeeds (or the CronJob is suspended or deleted). In place of each run's pod and
          // Job alerts.
          {
            alert: 'KubecauseCronJobFailing',
            expr: '%s > 0\n' % lib.records.cronJobFailing,
            'for': cfg.cronJobFailingFor,
            keep_firing_for: cfg.staleTolerance,
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'The runs of CronJobs fail.', 'CronJob 的运行持续失败。'),
              description: lib.t(cfg, 'CronJob {{ $labels.namespace }}/{{ $labels.workload }}%s: its runs since the last successful one fail: {{ $labels.cause }}%s.', 'CronJob {{ $labels.namespace }}/{{ $labels.workload }}%s 自上次成功以来的运行均失败：{{ $labels.cause }}%s。') % [onCluster, lib.onTarget(cfg)],
              runbook_url: lib.causeRunbookURL(cfg, lib.runbookURL(cfg, 'KubecauseCronJobFailing')),
            },
          },
        ],
      },
      {
        name: 'kubecause-storage',
        rules: [
          {
            alert: cats.storage.alert,
            expr: '%s > 0\n' % lib.records.pvcProvisioningFailing,
            'for': cfg.pvcProvisioningFailingFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'Persistent volume claims cannot be provisioned.', '无法为 PVC 供应卷。'),
              description: lib.t(cfg, 'PVC {{ $labels.namespace }}/{{ $labels.persistentvolumeclaim }}%s stays Pending: {{ $labels.cause }}.', 'PVC {{ $labels.namespace }}/{{ $labels.persistentvolumeclaim }}%s 一直处于 Pending：{{ $labels.cause }}。') % onCluster,
              runbook_url: lib.causeRunbookURL(cfg, lib.runbookURL(cfg, cats.storage.alert)),
            },
          },
          {
            // S2: a PVC a pod needs stays Pending after its Events expired, none were sent, or
            // only Events no rule recognises (cause unknown) explain it.
            alert: 'KubecausePVCPending',
            expr: '%s > 0\n' % lib.records.pvcPendingUnexplained,
            'for': cfg.pvcPendingFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'Persistent volume claims used by pods stay Pending.', '被 Pod 使用的 PVC 一直处于 Pending。'),
              description: lib.t(cfg, 'PVC {{ $labels.namespace }}/{{ $labels.persistentvolumeclaim }}%s is used by a pod and has been Pending for %s ({{ with $labels.storageclass }}storage class {{ . }}{{ else }}no storage class{{ end }}).', 'PVC {{ $labels.namespace }}/{{ $labels.persistentvolumeclaim }}%s 被 Pod 使用，已 Pending %s（{{ with $labels.storageclass }}StorageClass {{ . }}{{ else }}没有 StorageClass{{ end }}）。') % [onCluster, cfg.pvcPendingFor],
              runbook_url: lib.runbookURL(cfg, 'KubecausePVCPending'),
            },
          },
          {
            // S19: a deleted PVC that its finalizers keep.
            alert: 'KubecausePVCStuckTerminating',
            expr: '%s > 0\n' % lib.records.pvcTerminating,
            'for': cfg.pvcTerminatingFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'Persistent volume claims stay Terminating.', 'PVC 一直处于 Terminating。'),
              description: lib.t(cfg, 'PVC {{ $labels.namespace }}/{{ $labels.persistentvolumeclaim }}%s was deleted more than %s ago and still exists: a finalizer keeps it.', 'PVC {{ $labels.namespace }}/{{ $labels.persistentvolumeclaim }}%s 在 %s 前已被删除但仍然存在：被 finalizer 保留。') % [onCluster, cfg.pvcTerminatingFor],
              runbook_url: lib.runbookURL(cfg, 'KubecausePVCStuckTerminating'),
            },
          },
        ],
      },
      {
        name: 'kubecause-state',
        rules: std.prune([
          if !cfg.kubernetesMixinInstalled then {
            // S4/S5: containers stuck waiting while no live Event explains why. Read over
            // flapWindow: a container that runs a minute between crashes still counts.
            alert: 'KubecauseContainerWaiting',
            expr: '%s > 0\n' % lib.records.containerWaitingUnexplained,
            'for': cfg.containerWaitingFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'Containers are stuck waiting and no Event explains why.', '容器一直处于等待状态，且没有事件说明原因。'),
              description: lib.t(cfg, 'Container {{ $labels.container }} of pod {{ $labels.namespace }}/{{ $labels.pod }}%s has been waiting in {{ $labels.reason }} for %s.', 'Pod {{ $labels.namespace }}/{{ $labels.pod }}%s 的容器 {{ $labels.container }} 已处于 {{ $labels.reason }} 等待 %s。') % [onCluster, cfg.containerWaitingFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseContainerWaiting', '{{ $labels.reason | toLower }}'),
            },
          },
          if !cfg.ingressByNodePort then {
            // S3/S6: a LoadBalancer Service never gets an address (no metalLB or cloud LB).
            alert: 'KubecauseLoadBalancerNoAddress',
            expr: '%s > 0\n' % lib.records.loadBalancerNoAddress,
            'for': cfg.loadBalancerNoAddressFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'LoadBalancer Services have no external address.', 'LoadBalancer 类型的 Service 没有外部地址。'),
              description: lib.t(cfg, 'Service {{ $labels.namespace }}/{{ $labels.service }}%s is of type LoadBalancer and has had no ingress address for %s.', 'Service {{ $labels.namespace }}/{{ $labels.service }}%s 为 LoadBalancer 类型，已有 %s 没有 ingress 地址。') % [onCluster, cfg.loadBalancerNoAddressFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseLoadBalancerNoAddress'),
            },
          },
          if !cfg.kubernetesMixinInstalled then {
            // S17 (kubelet cannot start, e.g. no pids cgroup) and nodes down in general. Read
            // over flapWindow: a node that flips between Ready and NotReady still counts; a
            // single reboot shorter than the `for` does not page.
            alert: 'KubecauseNodeNotReady',
            expr: '%s > 0\n' % lib.records.nodeNotReady,
            'for': cfg.nodeNotReadyFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'Nodes are not ready.', '节点未就绪。'),
              description: lib.t(cfg, 'Node {{ $labels.node }}%s has not been Ready for %s.', '节点 {{ $labels.node }}%s 已有 %s 未处于 Ready。') % [onCluster, cfg.nodeNotReadyFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseNodeNotReady'),
            },
          },
          if !cfg.kubernetesMixinInstalled then {
            // S18: DiskPressure evicts pods; memory and PID pressure likewise.
            alert: 'KubecauseNodePressure',
            expr: '%s > 0\n' % lib.records.nodePressure,
            'for': cfg.nodePressureFor,
            keep_firing_for: cfg.staleTolerance,
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'Nodes report resource pressure and evict pods.', '节点报告资源压力并驱逐 Pod。'),
              description: lib.t(cfg, 'Node {{ $labels.node }}%s has reported {{ $labels.condition }} for %s; the kubelet evicts pods and admits no new ones.', '节点 {{ $labels.node }}%s 已报告 {{ $labels.condition }} 达 %s；kubelet 会驱逐 Pod 且不再接纳新 Pod。') % [onCluster, cfg.nodePressureFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseNodePressure', '{{ $labels.condition | toLower }}'),
            },
          },
        ]),
      },
      {
        name: 'kubecause-istiod-remote',
        rules: [
          {
            alert: 'KubecauseIstiodRemoteEndpointsMismatch',
            expr: |||
              max by (%(clusterLabel)s, check, namespace, service) (last_over_time(kubecause_endpoints_state{%(kubecauseSelector)s, %(istiodRemoteSelector)s, state="mismatch"}[%(staleTolerance)s])) == 1
            ||| % cfg,
            'for': cfg.istiodMismatchFor,
            labels: { severity: 'critical' },
            annotations: {
              summary: lib.t(cfg, 'The istiod-remote endpoints point at the wrong addresses.', 'istiod-remote 端点指向了错误的地址。'),
              description: lib.t(cfg, 'Endpoints of Service {{ $labels.namespace }}/{{ $labels.service }}%s do not match what check {{ $labels.check }} expects: sidecars and gateways of this cluster cannot reach istiod.', 'Service {{ $labels.namespace }}/{{ $labels.service }}%s 的端点与检查 {{ $labels.check }} 的期望不一致：该集群的 sidecar 和网关无法连接 istiod。') % onCluster,
              runbook_url: lib.runbookURL(cfg, 'KubecauseIstiodRemoteEndpointsMismatch'),
            },
          },
          {
            alert: 'KubecauseIstiodRemoteExpectationUnknown',
            expr: |||
              max by (%(clusterLabel)s, check, namespace, service) (last_over_time(kubecause_endpoints_state{%(kubecauseSelector)s, %(istiodRemoteSelector)s, state="unknown"}[%(staleTolerance)s])) == 1
            ||| % cfg,
            'for': cfg.istiodUnknownFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'The expected istiod-remote endpoints cannot be determined.', '无法确定 istiod-remote 应有的端点。'),
              description: lib.t(cfg, 'Check {{ $labels.check }} cannot tell which addresses Service {{ $labels.namespace }}/{{ $labels.service }}%s should have (hosted istiod pod or its LoadBalancer address missing).', '检查 {{ $labels.check }} 无法确定 Service {{ $labels.namespace }}/{{ $labels.service }}%s 应有的地址（缺少托管 istiod Pod 或其 LoadBalancer 地址）。') % onCluster,
              runbook_url: lib.runbookURL(cfg, 'KubecauseIstiodRemoteExpectationUnknown'),
            },
          },
          {
            alert: 'KubecauseEndpointCheckFailing',
            expr: |||
              max by (%(clusterLabel)s, check, namespace, service) (last_over_time(kubecause_endpoints_state{%(kubecauseSelector)s, state="error"}[%(staleTolerance)s])) == 1
            ||| % cfg,
            'for': cfg.endpointCheckFailingFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'Endpoint checks cannot be evaluated.', '无法执行端点检查。'),
              description: lib.t(cfg, 'Check {{ $labels.check }} of Service {{ $labels.namespace }}/{{ $labels.service }}%s has been failing for %s.', 'Service {{ $labels.namespace }}/{{ $labels.service }}%s 的检查 {{ $labels.check }} 已失败 %s。') % [onCluster, cfg.endpointCheckFailingFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseEndpointCheckFailing'),
            },
          },
        ],
      },
      {
        name: 'kubecause-exporter',
        rules: std.prune([
          {
            alert: 'KubecauseDown',
            // Every replica of a cluster failing its scrapes, or gone from a cluster that had
            // one in the last day (its series go stale: a global view of several clusters
            // still has up{} series of the others, so absent() alone would not see it), or no
            // target at all.
            expr: |||
              (sum by (%(clusterLabel)s) (up{%(kubecauseSelector)s}) == 0)
              or
              (
                max by (%(clusterLabel)s) (max_over_time(up{%(kubecauseSelector)s}[1d]))
                unless on (%(clusterLabel)s)
                max by (%(clusterLabel)s) (up{%(kubecauseSelector)s})
              )
              or
              (absent(up{%(kubecauseSelector)s}) unless on () max_over_time(up{%(kubecauseSelector)s}[1d]))
            ||| % cfg,
            'for': cfg.exporterDownFor,
            // A warning: kubecause being down loses diagnosis, not workloads; the pods, nodes
            // and the mesh keep running (a page would wake someone for the monitoring itself).
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'The kubecause exporter is down.', 'kubecause exporter 已停止。'),
              description: lib.t(cfg, 'No kubecause replica%s has been scraped successfully for %s: Event causes and istiod-remote checks are not monitored.', 'kubecause 的所有副本%s 已有 %s 无法被成功抓取：事件原因和 istiod-remote 检查不再受监控。') % [onCluster, cfg.exporterDownFor],
              runbook_url: lib.runbookURL(cfg, 'KubecauseDown'),
            },
          },
          if cfg.kubeStateMetricsMissingAlert then {
            // kube-state-metrics is not scraped: the alerts hold the state last seen for up to
            // stateSourceOutageTolerance (no resolve, no second notification), then resolve.
            alert: 'KubecauseStateSourceMissing',
            expr: |||
              label_replace(
                max by (%(clusterLabel)s) (max_over_time(up{%(kubeStateMetricsSelector)s}[1d]))
                unless on (%(clusterLabel)s)
                max by (%(clusterLabel)s) (up{%(kubeStateMetricsSelector)s} == 1),
                "source", "kube-state-metrics", "", ""
              )
            ||| % cfg,
            'for': cfg.stateSourceMissingFor,
            labels: { severity: 'warning' },
            annotations: {
              summary: lib.t(cfg, 'A state source is not scraped: the alerts hold their last state.', '状态来源未被抓取：告警保持最后的状态。'),
              description: lib.t(cfg, 'No {{ $labels.source }} target%s is up. The kubecause alerts read the state of pods, nodes and claims from it; they keep the state last seen for up to %s (firing alerts neither resolve nor notify again), then resolve whatever the cluster does.', '{{ $labels.source }}%s 没有处于 up 的抓取目标。kubecause 告警从它读取 Pod、节点和 PVC 的状态；在最多 %s 内保持最后看到的状态（正在触发的告警既不恢复也不重复通知），之后无论集群状态如何都会恢复。') % [onCluster, cfg.stateSourceOutageTolerance],
              runbook_url: lib.runbookURL(cfg, 'KubecauseStateSourceMissing'),
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
              summary: lib.t(cfg, 'The kubecause exporter cannot watch Events.', 'kubecause exporter 无法监听事件。'),
              description: lib.t(cfg, 'kubecause {{ $labels.instance }}%s has not been able to list or watch Events for %s.', 'kubecause {{ $labels.instance }}%s 已有 %s 无法 list 或 watch 事件。') % [onCluster, cfg.watchFailingFor],
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
              summary: lib.t(cfg, 'The kubecause exporter drops series because a cap is reached.', 'kubecause exporter 达到序列上限，正在丢弃序列。'),
              description: lib.t(cfg, 'kubecause%s drops new label sets of {{ $labels.metric }} ({{ $value | humanize }}/s): the cap is reached.', 'kubecause%s 正在丢弃 {{ $labels.metric }} 的新标签组合（{{ $value | humanize }}/s）：已达到上限。') % onCluster,
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
              summary: lib.t(cfg, 'Many Events match no rule of the cause table.', '大量事件未匹配原因表中的任何规则。'),
              description: lib.t(cfg, '{{ $value | humanizePercentage }} of the Event occurrences%s in the last hour have cause unknown.', '最近一小时内%s {{ $value | humanizePercentage }} 的事件发生次数原因为 unknown。') % onCluster,
              runbook_url: lib.runbookURL(cfg, cats.other.alert, 'unknown'),
            },
          },
        ]),
      },
    ],
  },
}
