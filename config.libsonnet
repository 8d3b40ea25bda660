// The configuration of the kubecause monitoring mixin: every switch, selector, duration and
// threshold, and what is derived from the cause table. Override it in your own jsonnet:
//   (import 'mixin.libsonnet') + { _config+:: { kubecauseSelector: 'job="my-kubecause"' } }
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

    // A scrape gap up to this long (kube-state-metrics or kubecause restarting, one failed
    // scrape) neither resets a pending alert nor resolves a firing one: alerts read KSM and
    // kubecause state through last_over_time over this window. A deleted pod's alerts resolve
    // at most this long after its series go.
    staleTolerance: '2m',
    // Window over which a container that flips between crashing and running (or a pod whose
    // Ready flaps) still counts as failing, as kubernetes-mixin's KubePodCrashLooping does.
    flapWindow: '5m',
    // A pod Ready without interruption this long has recovered: its flapping-aware alerts
    // resolve then. Longer than the running phase of a crash loop (about a minute).
    recoveredAfter: '90s',
    // Node alerts skip cordoned nodes (kube_node_spec_unschedulable): drained for maintenance,
    // a NotReady or pressured node is expected there.
    excludeCordonedNodes: true,
    // Clusters that reach the ingress gateway through a NodePort: a LoadBalancer Service
    // without an address is expected, so KubecauseLoadBalancerNoAddress is not generated.
    ingressByNodePort: false,
    // kube-prometheus-stack (kubernetes-mixin) is installed: drop the Kubecause alerts that say
    // the same as one of its alerts (KubecauseNodeNotReady = KubeNodeNotReady,
    // KubecauseNodePressure = KubeNodePressure, KubecauseContainerWaiting = KubeContainerWaiting).
    // The alerts that refine a kubernetes-mixin alert with a cause stay; the inhibition rules
    // (rules/generated/inhibit-rules.yaml) let them silence it.
    kubernetesMixinInstalled: false,

    // Alert durations. Most symptom alerts wait 15m: a page at 3 a.m. must be worth it.
    podStartFailingFor: '10m',
    podProbeFailingFor: '15m',
    containerFailingFor: '15m',
    // Longer than nodePressureFor: a node under pressure pages (and inhibits the evictions it
    // causes) before its evicted pods do; an eviction whose pressure cleared by itself pages alone.
    podEvictedFor: '15m',
    // Evictions on a node whose pressure held nodePressureFor (so it paged) within this long are
    // that page's detail: they do not page on their own when the pressure clears (their Events
    // live the apiserver's --event-ttl, 1h by default).
    evictionsExplainedFor: '1h',
    podUnschedulableFor: '15m',
    pvcProvisioningFailingFor: '15m',
    pvcPendingFor: '15m',
    // A pod that uses a claim whose storage failed within this long is that failure's detail:
    // its scheduling and volume alerts do not page. Covers the scheduler's back-off before it
    // retries a pod whose claim got bound (up to its 5m maximum) and the mount after it.
    claimSettleFor: '10m',
    pvcTerminatingFor: '30m',
    containerWaitingFor: '15m',
    loadBalancerNoAddressFor: '15m',
    nodeNotReadyFor: '15m',
    nodePressureFor: '10m',
    istiodMismatchFor: '5m',
    // The pods of the mesh: those with a container (or native sidecar init container) of this
    // name, per kube-state-metrics. While KubecauseIstiodRemoteEndpointsMismatch fires and for
    // meshSettleFor after it resolved, their probe failures are its detail: with Istio's probe
    // rewrite most read as a bare HTTP status that names no sidecar. 10m: the probe state reads
    // flapWindow (5m) back and a pod must stay Ready recoveredAfter (90s) to recover, so a pod
    // whose sidecar reconnects within a few minutes of the fix has left it by then.
    meshProxyContainer: 'istio-proxy',
    meshSettleFor: '10m',
    istiodUnknownFor: '15m',
    endpointCheckFailingFor: '15m',
    exporterDownFor: '15m',
    watchFailingFor: '10m',
    seriesCapFor: '15m',
    unclassifiedFor: '1h',
    workloadFailingFor: '10m',
    // A CronJob whose runs fail: one alert per CronJob, naming the cause first seen
    // (KubecauseCronJobFailing), in place of one per run's pod and Job. It is kept between runs
    // until a run succeeds, for at most cronJobHoldFor after the last failing run started: longer
    // than a day, so that a daily schedule's next failing run finds it still firing.
    cronJobFailingFor: '10m',
    cronJobHoldFor: '25h',
    // A crash loop whose container the kernel OOM-killed (kube-state-metrics' last terminated
    // reason) and restarted within this window is named oom_killed. Longer than the kubelet's
    // longest crash back-off (5m), so the name does not flip between restarts.
    oomWindow: '15m',
    // A pod that still fails with a symptom of its own (mount_timeout, image_pull_backoff) keeps
    // the root cause of the same category it showed (configmap_not_found, image_not_found) when
    // that cause's Event stops being refreshed (the kubelet's spam filter) or expires (the
    // apiserver's --event-ttl, 1h by default), for at most this long after it was last seen:
    // its alert neither changes cause nor pages again. As long as the route's repeat_interval
    // (4h): a pod failing longer is reminded then anyway, and a root cause fixed long ago
    // cannot name a new failure of the same category for ever.
    rootCauseHoldFor: '4h',
    // The one cause not read from an Event: a crash loop whose container kube-state-metrics
    // reports OOMKilled is named `to` instead of `from` (both causes of the table).
    oomRefines: { from: 'crash_loop_backoff', to: 'oom_killed' },
    // An incident: pods of at least incidentMinWorkloads workloads fail for one cause on one
    // target (registry, CNI plugin, CSI driver, node, quota, webhook). One notification names
    // it; its per-pod alerts are inhibited. Its `for` is shorter than the per-pod alerts' so
    // it is firing before they are and they never notify on their own.
    incidentMinWorkloads: 3,
    // An incident that had incidentMinWorkloads within this long stays firing while any of its
    // workloads still fails: pods that recover last are not paged one by one after it resolved.
    incidentHoldFor: '1h',
    incidentFor: '5m',
    incidentSeverity: 'critical',
    // A state source (kube-state-metrics, kubecause) that stops being scraped freezes the
    // state the alerts read at its last values for up to this long: firing alerts neither
    // resolve nor notify again during a restart or outage. KubecauseStateSourceMissing says so.
    stateSourceOutageTolerance: '30m',
    stateSourceMissingFor: '5m',
    // Generate KubecauseStateSourceMissing for kube-state-metrics (set false when another pack,
    // e.g. kube-prometheus' TargetDown, already alerts on it). kubecause's own is KubecauseDown.
    kubeStateMetricsMissingAlert: true,
    // Receiver name of the generated Alertmanager route (rules/alertmanager/): set it to yours.
    alertmanagerReceiver: 'kubecause',

    // Thresholds.
    unclassifiedRatioThreshold: 0.25,  // share of occurrences whose cause is "unknown"
    unclassifiedMinOccurrences: 20,  // per hour, below this the ratio means nothing

    // SLOs (30 day window, multi-window multi-burn-rate alerts from the SRE workbook).
    sloWindow: '30d',
    podStartSLOTarget: 0.99,  // 99 % of pod starts without a platform failure (podStart: platform causes)
    // Minimum event counts: a ratio over a handful of pod starts says little (one failing pod of
    // a small cluster is a 100 % error ratio; its own per-cause alert names it).
    podStartSLOMinStarts: 10,  // pod starts in the long window
    podStartSLOMinErrors: 3,  // platform-failed pod starts in the long window
    podStartSLOMinShortErrors: 2,  // platform-failed pod starts in the short window (or pods stuck now)
    istiodRemoteSLOTarget: 0.999,  // istiod-remote endpoints correct 99.9 % of the time
    // A burn alert of the time-based istiod-remote SLI needs this many bad samples (minutes) in
    // its short window: one bad sample is not a page. A sustained mismatch is the job of
    // KubecauseIstiodRemoteEndpointsMismatch; the burn alerts catch mismatches that come and go
    // faster than its `for`, and stay silent while (and one short window after) it fires.
    istiodRemoteSLOMinBadSamples: 2,
    sloBurnRates: [
      { long: '1h', short: '5m', factor: 14.4, severity: 'critical', 'for': '2m' },
      { long: '6h', short: '30m', factor: 6, severity: 'critical', 'for': '15m' },
      { long: '1d', short: '2h', factor: 3, severity: 'warning', 'for': '1h' },
      { long: '3d', short: '6h', factor: 1, severity: 'warning', 'for': '3h' },
    ],
    // The SLIs are recorded over sloShortWindow; every longer window is derived from that
    // record (as sloth and pyrra do), so no rule reads a raw 30-day range.
    sloShortWindow: '5m',
    sloRecordWindows: ['5m', '30m', '1h', '2h', '6h', '1d', '3d', '30d'],
    sloEvaluationInterval: '1m',  // evaluation interval of the SLO recording groups

    // Runbooks: docs/runbooks/<page>.md (English) or docs/runbooks/zh/<page>.md (Chinese).
    // Language of the alerts' summaries and descriptions and of the runbook pages: 'en' | 'zh'.
    language: 'en',
    runbookLanguage: self.language,  // 'en' | 'zh'
    // The URL under which users reach kubecause (its --web.external-url, e.g.
    // 'https://kubecause.example.com'): when set, runbook links point at the runbooks kubecause
    // serves there (<url>/runbooks/<page>?lang=<runbookLanguage>), which air-gapped clusters reach.
    kubecauseExternalURL: '',
    runbookBaseURL: if self.kubecauseExternalURL != '' then std.rstripChars(self.kubecauseExternalURL, '/') + '/runbooks/'
    else 'https://github.com/kubecause/kubecause/blob/main/docs/runbooks/',
    runbookURLPattern: if self.kubecauseExternalURL != '' then self.runbookBaseURL + '%s?lang=' + self.runbookLanguage
    else self.runbookBaseURL + (if self.runbookLanguage == 'zh' then 'zh/' else '') + '%s.md',
    // The runbook index (the dashboards' "Runbooks" link).
    runbookIndexURL: if self.kubecauseExternalURL != '' then self.runbookBaseURL + '?lang=' + self.runbookLanguage
    else std.strReplace(self.runbookURLPattern, '%s.md', 'README.md'),

    // Dashboards.
    grafanaUIDPrefix: 'kubecause-',
    grafanaTags: ['kubecause'],
    grafanaRefresh: '1m',
    grafanaTimeFrom: 'now-6h',

    // The cause table the exporter loads is the only place where a cause is defined: its
    // category (which alert shows it), whether it is a symptom, whether it counts against the
    // pod-start SLO (podStart: platform), its target and its runbook. The exporter serves them as
    // labels of kubecause_cause_info and the rules select causes by them
    // (cluster_cause:kubecause_cause_info:latest), never by name: a table of your own
    // (--causes.file) needs no change here. Runbook links of causes follow the exporter's
    // --runbook.url-pattern (or the table's https:// links), not runbookURLPattern below.
    // The built-in table, read only to document and test the mixin (docs, runbook anchors):
    causeTable: std.parseYaml(importstr 'exporter/causes/causes.yaml'),

    // The alert of each cause category, the kind of object its causes are counted on, the
    // state (a recording rule of rules/rules.libsonnet) that says the problem is still there,
    // its `for`, and whether it keeps a pod from starting (podStart: its platform causes count
    // against the pod-start SLO). Declared once: the alerts, the inhibition rules, the SLO and
    // the dashboards read it. A cause whose category is not listed here is counted by the
    // exporter but has no alert of its own: give your own causes one of these categories.
    categoryAlerts: {
      volume: { alert: 'KubecausePodVolumeFailing', kind: 'Pod', state: 'notStarted', 'for': $._config.podStartFailingFor, podStart: true },
      sandbox: { alert: 'KubecausePodSandboxFailing', kind: 'Pod', state: 'notStarted', 'for': $._config.podStartFailingFor, podStart: true },
      image: { alert: 'KubecausePodImagePullFailing', kind: 'Pod', state: 'notStarted', 'for': $._config.podStartFailingFor, podStart: true },
      probe: { alert: 'KubecausePodProbeFailing', kind: 'Pod', state: 'unhealthy', 'for': $._config.podProbeFailingFor, podStart: false },
      container: { alert: 'KubecauseContainerFailing', kind: 'Pod', state: 'unhealthy', 'for': $._config.containerFailingFor, podStart: false },
      scheduling: { alert: 'KubecausePodUnschedulable', kind: 'Pod', state: 'unschedulable', 'for': $._config.podUnschedulableFor, podStart: false },
      eviction: { alert: 'KubecausePodEvicted', kind: 'Pod', state: 'terminated', 'for': $._config.podEvictedFor, podStart: false },
      storage: { alert: 'KubecausePVCProvisioningFailing', kind: 'PersistentVolumeClaim', podStart: false },
      workload: { alert: 'KubecauseWorkloadFailing', kind: 'Workload', 'for': $._config.workloadFailingFor, podStart: false },
      other: { alert: 'KubecauseUnclassifiedEvents', kind: '', podStart: false },
    },

    // Derived from the built-in table (do not override; no rule reads the lists): per category
    // its causes and its symptoms (causes that follow from another cause; an alert shows them
    // only when no root cause of any category is live on the same object).
    causeCategories: {
      [k]: $._config.categoryAlerts[k] {
        causes: [c.name for c in $._config.causeTable.causes if c.category == k],
        symptoms: [c.name for c in $._config.causeTable.causes if c.category == k && std.get(c, 'symptom', false)],
      }
      for k in std.objectFields($._config.categoryAlerts)
    },
    // Derived: the per-pod categories, and the alerts of each (inhibition, dashboards).
    podCategories: [k for k in std.objectFields(self.categoryAlerts) if self.categoryAlerts[k].kind == 'Pod'],
    podAlerts: [self.categoryAlerts[k].alert for k in self.podCategories],
    podStartAlerts: [self.categoryAlerts[k].alert for k in self.podCategories if self.categoryAlerts[k].podStart],
  },
}
