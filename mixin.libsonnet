// The kubecause monitoring mixin: alerts, recording rules (SLOs) and Grafana dashboards.
// Tools (mixtool, jsonnet) evaluate the hidden fields _config, prometheusAlerts,
// prometheusRules and grafanaDashboards. Override _config to adapt it:
//   (import 'mixin.libsonnet') + { _config+:: { kubecauseSelector: 'job="my-kubecause"' } }
(import 'rules/alerts.libsonnet') +
(import 'rules/rules.libsonnet') +
(import 'dashboards/dashboards.libsonnet') +
{
  _config+:: {
    // One selector per scrape job, inserted into every query.
    kubecauseSelector: 'job="kubecause"',
    kubeStateMetricsSelector: 'job="kube-state-metrics"',
    // Endpoint checks that watch the istiod-remote Service (all checks by default).
    istiodRemoteSelector: 'check!=""',

    // Every aggregation keeps this label so the rules work on a global (Thanos/Mimir) view.
    clusterLabel: 'cluster',
    showMultiCluster: false,

    // kubecause runs as two replicas that both count; queries take the max across them.
    // Target labels that differ between the replicas:
    replicaLabels: ['instance', 'pod'],

    // Alert durations. Most symptom alerts wait 15m: a page at 3 a.m. must be worth it.
    podStartFailingFor: '10m',
    podProbeFailingFor: '15m',
    containerFailingFor: '15m',
    podEvictedFor: '1m',
    podUnschedulableFor: '15m',
    pvcProvisioningFailingFor: '15m',
    pvcPendingFor: '15m',
    pvcTerminatingFor: '30m',
    containerWaitingFor: '15m',
    loadBalancerNoAddressFor: '15m',
    nodeNotReadyFor: '15m',
    nodePressureFor: '10m',
    istiodMismatchFor: '5m',
    istiodUnknownFor: '15m',
    endpointCheckFailingFor: '15m',
    exporterDownFor: '15m',
    watchFailingFor: '10m',
    seriesCapFor: '15m',
    unclassifiedFor: '1h',

    // Thresholds.
    unclassifiedRatioThreshold: 0.25,  // share of occurrences whose cause is "unknown"
    unclassifiedMinOccurrences: 20,  // per hour, below this the ratio means nothing

    // SLOs (30 day window, multi-window multi-burn-rate alerts from the SRE workbook).
    sloWindow: '30d',
    podStartSLOTarget: 0.99,  // 99 % of pod starts without volume/sandbox/image failures
    podStartSLOMinStarts: 10,  // pod-start burn alerts need at least this many starts in their long window
    istiodRemoteSLOTarget: 0.999,  // istiod-remote endpoints correct 99.9 % of the time
    sloBurnRates: [
      { long: '1h', short: '5m', factor: 14.4, severity: 'critical', 'for': '2m' },
      { long: '6h', short: '30m', factor: 6, severity: 'critical', 'for': '15m' },
      { long: '1d', short: '2h', factor: 3, severity: 'warning', 'for': '1h' },
      { long: '3d', short: '6h', factor: 1, severity: 'warning', 'for': '3h' },
    ],
    sloRecordWindows: ['5m', '30m', '1h', '2h', '6h', '1d', '3d', '30d'],

    // Runbooks: docs/runbooks/<page>.md (English) or docs/runbooks/zh/<page>.md (Chinese).
    runbookLanguage: 'en',  // 'en' | 'zh'
    runbookBaseURL: 'https://github.com/kubecause/kubecause/blob/main/docs/runbooks/',
    runbookURLPattern: self.runbookBaseURL + (if self.runbookLanguage == 'zh' then 'zh/' else '') + '%s.md',

    // Dashboards.
    grafanaUIDPrefix: 'kubecause-',
    grafanaTags: ['kubecause'],
    grafanaRefresh: '1m',
    grafanaTimeFrom: 'now-6h',

    // The closed set of causes per category (the exporter's cause table), with the alert and
    // runbook page of each category. symptoms: causes that follow from another cause of the
    // same object; an alert shows them only when no root cause is live on the object.
    causeCategories: {
      volume: {
        alert: 'KubecausePodVolumeFailing',
        kind: 'Pod',
        podStart: true,
        causes: ['configmap_not_found', 'secret_not_found', 'config_key_missing', 'mount_timeout', 'volume_multi_attach', 'volume_attach_failed', 'subpath_failed', 'pvc_not_found', 'volume_mount_failed'],
        symptoms: ['mount_timeout'],
      },
      sandbox: {
        alert: 'KubecausePodSandboxFailing',
        kind: 'Pod',
        podStart: true,
        causes: ['disk_full', 'memory_limit_too_small', 'sandbox_changed', 'sandbox_name_conflict', 'runtime_shim_error', 'runtime_timeout', 'cni_error', 'selinux_denied', 'sandbox_failed'],
        symptoms: ['sandbox_changed'],
      },
      image: {
        alert: 'KubecausePodImagePullFailing',
        kind: 'Pod',
        podStart: true,
        causes: ['image_auth_failed', 'image_not_found', 'image_insecure_registry', 'image_registry_tls', 'image_registry_unreachable', 'image_pull_rate_limited', 'image_pull_timeout', 'image_pull_backoff', 'image_never_pull', 'image_invalid_name', 'image_pull_failed'],
        symptoms: ['image_pull_backoff'],
      },
      probe: {
        alert: 'KubecausePodProbeFailing',
        kind: 'Pod',
        podStart: false,
        causes: [
          p + '_probe_' + f
          for p in ['liveness', 'readiness', 'startup']
          for f in ['connection_refused', 'timeout', 'http_status', 'exec_failed', 'failed']
        ],
        symptoms: [],
      },
      container: {
        alert: 'KubecauseContainerFailing',
        kind: 'Pod',
        podStart: false,
        causes: ['crash_loop_backoff', 'container_config_error', 'container_create_failed', 'image_wrong_architecture', 'oom_killed', 'hook_failed'],
        symptoms: ['crash_loop_backoff'],
      },
      eviction: {
        alert: 'KubecausePodEvicted',
        kind: 'Pod',
        podStart: false,
        causes: ['evicted_memory', 'evicted_disk', 'evicted_ephemeral_storage_limit', 'evicted_pids', 'evicted_other'],
        symptoms: [],
      },
      scheduling: {
        alert: 'KubecausePodUnschedulable',
        kind: 'Pod',
        podStart: false,
        causes: ['scheduling_insufficient_resources', 'scheduling_node_selector_mismatch', 'scheduling_taint_not_tolerated', 'scheduling_pvc_unbound', 'scheduling_volume_node_affinity', 'scheduling_no_nodes', 'scheduling_port_conflict', 'scheduling_failed'],
        symptoms: [],
      },
      storage: {
        alert: 'KubecausePVCProvisioningFailing',
        kind: 'PersistentVolumeClaim',
        podStart: false,
        causes: ['no_storage_class', 'provisioning_failed'],
        symptoms: [],
      },
      other: {
        alert: 'KubecauseUnclassifiedEvents',
        kind: '',
        podStart: false,
        causes: ['unknown'],
        symptoms: [],
      },
    },
  },
}
