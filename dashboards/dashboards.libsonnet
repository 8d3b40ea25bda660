// Grafana dashboards: Overview, Hosted mesh, SLO, Exporter. Every query dedupes the
// kubecause replicas (max without instance, pod) and selects the cluster variable.
local lib = import '../rules/lib.libsonnet';
local g = import 'lib/grafana.libsonnet';

{
  local cfg = $._config,
  local c = { kc: cfg.kubecauseSelector, ksm: cfg.kubeStateMetricsSelector, cl: cfg.clusterLabel, istiod: cfg.istiodRemoteSelector },
  local dd(expr) = lib.dedup(cfg, expr),
  local file(name) = cfg.grafanaUIDPrefix + name + '.json',

  grafanaDashboards+:: {
    [file('overview')]: g.dashboard(cfg,
                                    file('overview'),
                                    'kubecause / Overview',
                                    'What broke, where and why: Warning Event occurrences by cause, the pods affected now with their runbooks.',
                                    [
                                      g.table('Live problems',
                                              'Pods with a live problem now: cause, node, owning workload (Deployment through its ReplicaSet) and when it was last seen (newest occurrence). The cause links its runbook section. Start here.',
                                              'dateTimeFromNow',
                                              [g.target(|||
                                                max by (namespace, pod, cause, node, workload_type, workload, runbook_url) (
                                                  label_replace(
                                                    max by (%(cl)s, namespace, name, cause) (kubecause_object_event_last_timestamp_seconds{%(kc)s, %(cl)s="$cluster", kind="Pod", namespace=~"$namespace"}),
                                                    "pod", "$1", "name", "(.+)"
                                                  ) * 1000
                                                  * on (%(cl)s, namespace, pod) group_left (node, workload_type, workload)
                                                  %(workload)s{%(cl)s="$cluster"}
                                                  * on (cause) group_left (runbook_url)
                                                  max by (cause, runbook_url) (%(info)s{%(cl)s="$cluster"})
                                                )
                                              ||| % (c { workload: lib.podWorkloadRecord, info: lib.records.causeInfo }), instant=true)],
                                              h=10,
                                              fieldLinks={ cause: '${__data.fields.runbook_url}' },
                                              hidden=['runbook_url'],
                                              links=[g.runbookLink(cfg, cfg.causeCategories[k].alert) for k in ['volume', 'sandbox', 'image', 'probe', 'container', 'scheduling']]),
                                      g.table('Firing kubecause alerts',
                                              'Kubecause alerts firing now, with what they name (pod, node, workload, cause). The runbook of each alert is docs/runbooks/<alert name in lower case>.md (dashboard link Runbooks).',
                                              'short',
                                              [g.target('max by (alertname, severity, namespace, pod, node, workload, cause, persistentvolumeclaim, service) (ALERTS{alertname=~"Kubecause.*", alertstate="firing", %(cl)s="$cluster", namespace=~"$namespace|"})' % c, instant=true)],
                                              h=7,
                                              links=[{ title: 'Runbooks', url: cfg.runbookIndexURL, targetBlank: true }]),
                                      g.table('Nodes: live problems per node',
                                              'Pods with a live problem per node and cause: a node-level fault (full disk, CNI, runtime) shows as many pods of one node.',
                                              'short',
                                              [g.target(|||
                                                count by (node, cause) (
                                                  label_replace(
                                                    max by (%(cl)s, namespace, name, cause) (kubecause_object_events{%(kc)s, %(cl)s="$cluster", kind="Pod", namespace=~"$namespace"}),
                                                    "pod", "$1", "name", "(.+)"
                                                  )
                                                  * on (%(cl)s, namespace, pod) group_left (node)
                                                  %(workload)s{%(cl)s="$cluster"}
                                                )
                                              ||| % (c { workload: lib.podWorkloadRecord }), instant=true)],
                                              h=7,
                                              links=[g.runbookLink(cfg, cfg.causeCategories.sandbox.alert), g.runbookLink(cfg, 'KubecauseNodeNotReady'), g.runbookLink(cfg, 'KubecauseNodePressure')]),
                                      g.timeseries('Occurrences by cause',
                                                   'Warning Event occurrences per second by cause (counted as Kubernetes counts them; a lower bound, delayed by up to ~5 min).',
                                                   'cps',
                                                   [g.target('sum by (cause) (%s)' % dd('rate(kubecause_events_total{%(kc)s, %(cl)s="$cluster", namespace=~"$namespace"}[$__rate_interval])' % c), '{{cause}}')],
                                                   w=16,
                                                   stack=true,
                                                   links=[g.runbookLink(cfg, 'KubecauseUnclassifiedEvents', 'unknown')]),
                                      g.timeseries('Top namespaces',
                                                   'The 10 namespaces with the most Warning Event occurrences per second.',
                                                   'cps',
                                                   [g.target('topk(10, sum by (namespace) (%s))' % dd('rate(kubecause_events_total{%(kc)s, %(cl)s="$cluster", namespace=~"$namespace"}[$__rate_interval])' % c), '{{namespace}}')],
                                                   w=8),
                                      g.table('Pods affected now',
                                              'Pods with a live Warning Event per reason and cause (the per-object view; an Event lives 1 h by default). Click the cause for its runbook section.',
                                              'short',
                                              [g.target(|||
                                                max by (namespace, name, reason, cause) (kubecause_object_events{%(kc)s, %(cl)s="$cluster", kind="Pod", namespace=~"$namespace"})
                                                * on (cause) group_left (category, runbook_url)
                                                max by (cause, category, runbook_url) (%(info)s{%(cl)s="$cluster"})
                                              ||| % (c { info: lib.records.causeInfo }), instant=true)],
                                              fieldLinks={ cause: '${__data.fields.runbook_url}' },
                                              hidden=['runbook_url'],
                                              links=[g.runbookLink(cfg, cfg.causeCategories[k].alert) for k in ['volume', 'sandbox', 'image', 'probe', 'container']]),
                                      g.timeseries('Objects that began to show a cause',
                                                   'Objects (pods, PVCs, …) that began to show a cause: counted once per object and cause, never per retry.',
                                                   'short',
                                                   [g.target('sum by (kind, cause) (%s)' % dd('increase(kubecause_objects_affected_total{%(kc)s, %(cl)s="$cluster", namespace=~"$namespace"}[$__rate_interval])' % c), '{{kind}} {{cause}}')],
                                                   w=12),
                                      g.timeseries('Containers waiting (kube-state-metrics)',
                                                   'Containers waiting per reason as kube-state-metrics reports them: the state that makes the alerts resolve.',
                                                   'short',
                                                   [g.target('sum by (reason) (kube_pod_container_status_waiting_reason{%(ksm)s, %(cl)s="$cluster", namespace=~"$namespace"})' % c, '{{reason}}')],
                                                   w=12,
                                                   links=[g.runbookLink(cfg, 'KubecauseContainerWaiting')]),
                                      g.table('Other objects affected now',
                                              'Objects other than pods (PVCs, nodes, Services, …) with a live Warning Event.',
                                              'short',
                                              [g.target('max by (namespace, kind, name, reason, cause) (kubecause_object_events{%(kc)s, %(cl)s="$cluster", kind!="Pod", namespace=~"$namespace"})' % c, instant=true)],
                                              links=[g.runbookLink(cfg, 'KubecausePVCProvisioningFailing')]),
                                    ]),

    [file('hosted-mesh')]: g.dashboard(cfg,
                                       file('hosted-mesh'),
                                       'kubecause / Hosted mesh',
                                       'istiod-remote endpoint checks, LoadBalancer addresses and gateway probe failures of a hosted service mesh, in the selected namespaces.',
                                       [
                                         g.table('istiod-remote state',
                                                 'Current state of every endpoint check: match, mismatch (critical), unknown (expectation cannot be known, e.g. no LoadBalancer address) or error.',
                                                 'short',
                                                 [g.target('max by (check, namespace, service, state) (kubecause_endpoints_state{%(kc)s, %(cl)s="$cluster", namespace=~"$namespace"}) == 1' % c, instant=true)],
                                                 w=12,
                                                 h=7,
                                                 links=[g.runbookLink(cfg, 'KubecauseIstiodRemoteEndpointsMismatch'), g.runbookLink(cfg, 'KubecauseIstiodRemoteExpectationUnknown')]),
                                         g.timeseries('Endpoints match',
                                                      '1 while the istiod-remote endpoints equal the expectation, 0 while they do not; gaps while unknown or error.',
                                                      'bool_yes_no',
                                                      [g.target('min by (check) (%s)' % dd('kubecause_endpoints_match{%(kc)s, %(cl)s="$cluster", namespace=~"$namespace", %(istiod)s}' % c), '{{check}}')],
                                                      w=12,
                                                      h=7,
                                                      links=[g.runbookLink(cfg, 'KubecauseIstiodRemoteEndpointsMismatch')]),
                                         g.timeseries('Expected and actual addresses',
                                                      'address:port pairs the check expects and finds in the EndpointSlices.',
                                                      'short',
                                                      [
                                                        g.target('max by (check) (kubecause_endpoints_expected_addresses{%(kc)s, %(cl)s="$cluster", namespace=~"$namespace"})' % c, 'expected {{check}}'),
                                                        g.target('max by (check) (kubecause_endpoints_actual_addresses{%(kc)s, %(cl)s="$cluster", namespace=~"$namespace"})' % c, 'actual {{check}}'),
                                                      ],
                                                      w=12),
                                         g.table('Wrong addresses',
                                                 'Addresses that should not be there (unexpected), that are missing, or that lack a required port.',
                                                 'short',
                                                 [g.target('max by (check, namespace, service, address, port, problem) (kubecause_endpoints_wrong_address{%(kc)s, %(cl)s="$cluster", namespace=~"$namespace"})' % c, instant=true)],
                                                 w=12,
                                                 h=8,
                                                 links=[g.runbookLink(cfg, 'KubecauseIstiodRemoteEndpointsMismatch')]),
                                         g.table('LoadBalancer addresses',
                                                 'Ingress addresses of LoadBalancer Services (kube-state-metrics). The hosted istiod needs one on its -hosted-lb Service.',
                                                 'short',
                                                 [g.target('max by (namespace, service, ip, hostname) (kube_service_status_load_balancer_ingress{%(ksm)s, %(cl)s="$cluster", namespace=~"$namespace"})' % c, instant=true)],
                                                 w=12,
                                                 h=8,
                                                 links=[g.runbookLink(cfg, 'KubecauseLoadBalancerNoAddress')]),
                                         g.table('LoadBalancer Services without address',
                                                 'LoadBalancer Services that have no ingress address: no metalLB or cloud load balancer serves them.',
                                                 'short',
                                                 [g.target(|||
                                                   max by (namespace, service) (kube_service_spec_type{%(ksm)s, %(cl)s="$cluster", namespace=~"$namespace", type="LoadBalancer"})
                                                   unless on (namespace, service)
                                                   max by (namespace, service) (kube_service_status_load_balancer_ingress{%(ksm)s, %(cl)s="$cluster", namespace=~"$namespace"})
                                                 ||| % c, instant=true)],
                                                 w=12,
                                                 h=8,
                                                 links=[g.runbookLink(cfg, 'KubecauseLoadBalancerNoAddress')]),
                                         g.timeseries('Gateway and istiod probe failures',
                                                      'Probe failures on live Events of gateway and istiod pods (e.g. readiness probe connection refused when the cluster has no metalLB, or a sidecar without its configuration yet).',
                                                      'short',
                                                      [g.target('max by (namespace, name, cause) (kubecause_object_events{%(kc)s, %(cl)s="$cluster", namespace=~"$namespace", kind="Pod", name=~".*(gateway|istiod).*", cause=~".+_probe_.+|istio_sidecar_not_ready"})' % c, '{{namespace}}/{{name}} {{cause}}')],
                                                      w=12,
                                                      links=[g.runbookLink(cfg, 'KubecausePodProbeFailing')]),
                                         g.table('Mesh discovery',
                                                 "What auto-discovery found: mesh ID and the role of this cluster (control-plane or workload), for the checks of the selected namespaces (the discovery series has no namespace: the check's state series gives it).",
                                                 'short',
                                                 [g.target(|||
                                                   max by (check, mesh_id, role, source) (kubecause_endpoints_discovery_info{%(kc)s, %(cl)s="$cluster"})
                                                   and on (check)
                                                   max by (check) (kubecause_endpoints_state{%(kc)s, %(cl)s="$cluster", namespace=~"$namespace"})
                                                 ||| % c, instant=true)],
                                                 w=12,
                                                 h=8,
                                                 links=[g.runbookLink(cfg, 'KubecauseIstiodRemoteExpectationUnknown')]),
                                       ]),

    [file('slo')]: g.dashboard(cfg,
                               file('slo'),
                               'kubecause / SLO',
                               'Pod-start SLO (pods start without volume, sandbox or image-pull failures, once per pod) and istiod-remote SLO (endpoints correct, time based): budget left and burn rates.',
                               [
                                 g.stat('Pod-start SLI (%s)' % cfg.sloWindow,
                                        'Share of pod starts in the SLO window without a platform failure (node, runtime, CNI, disk, storage attach; causes with podStart: platform in the cause table). Target %g.' % cfg.podStartSLOTarget,
                                        'percentunit',
                                        [g.target('1 - cluster:kubecause_pod_start_error:ratio_rate%s{%s="$cluster"}' % [cfg.sloWindow, c.cl])],
                                        w=8,
                                        links=[g.runbookLink(cfg, 'KubecausePodStartErrorBudgetBurn')]),
                                 g.stat('Pod-start error budget left',
                                        'Share of the %s error budget not spent yet (below 0: the SLO is violated).' % cfg.sloWindow,
                                        'percentunit',
                                        [g.target('1 - cluster:kubecause_pod_start_error:ratio_rate%s{%s="$cluster"} / (1 - %g)' % [cfg.sloWindow, c.cl, cfg.podStartSLOTarget])],
                                        w=8,
                                        thresholds=[{ color: 'red', value: null }, { color: 'orange', value: 0 }, { color: 'green', value: 0.25 }]),
                                 // The SLO window has no recorded start count: the SLO group is at its
                                 // 20-rule limit (Mimir's default per group), and a group of its own
                                 // would read the 5m records across groups. The stat shows the
                                 // longest burn window and says so in its title.
                                 local startsWindow = cfg.sloBurnRates[std.length(cfg.sloBurnRates) - 1].long;
                                 g.stat('Pod starts, last %s (burn alerts)' % startsWindow,
                                        'Pods the kubelets started in the last %s, the longest window of the burn alerts (kube-state-metrics kube_pod_start_time), and how many of them a platform cause kept from starting. Not the %s SLO window of the SLI beside it: the burn alerts need at least %d starts in their long window, this is what the slowest one sees.' % [startsWindow, cfg.sloWindow, cfg.podStartSLOMinStarts],
                                        'short',
                                        [
                                          g.target('cluster:kubecause_pod_starts:count%s{%s="$cluster"}' % [startsWindow, c.cl], 'starts'),
                                          g.target('cluster:kubecause_pod_start_errors:count%s{%s="$cluster"}' % [startsWindow, c.cl], 'platform failures'),
                                        ],
                                        w=8),
                                 g.timeseries('Pod-start burn rate',
                                              'Error ratio divided by the error budget (1 = spending exactly the budget). The alerts page at 14.4 (1h) and 6 (6h).',
                                              'none',
                                              [
                                                g.target('cluster:kubecause_pod_start_error:ratio_rate%s{%s="$cluster"} / (1 - %g)' % [w, c.cl, cfg.podStartSLOTarget], w)
                                                for w in ['1h', '6h', '1d', '3d']
                                              ],
                                              w=24,
                                              links=[g.runbookLink(cfg, 'KubecausePodStartErrorBudgetBurn')]),
                                 g.stat('istiod-remote SLI (%s)' % cfg.sloWindow,
                                        'Share of time the istiod-remote endpoints were correct. Target %g.' % cfg.istiodRemoteSLOTarget,
                                        'percentunit',
                                        [g.target('1 - cluster:kubecause_istiod_remote_error:ratio_rate%s{%s="$cluster"}' % [cfg.sloWindow, c.cl])],
                                        w=12,
                                        links=[g.runbookLink(cfg, 'KubecauseIstiodRemoteErrorBudgetBurn')]),
                                 g.stat('istiod-remote error budget left',
                                        'Share of the %s error budget not spent yet.' % cfg.sloWindow,
                                        'percentunit',
                                        [g.target('1 - cluster:kubecause_istiod_remote_error:ratio_rate%s{%s="$cluster"} / (1 - %g)' % [cfg.sloWindow, c.cl, cfg.istiodRemoteSLOTarget])],
                                        w=12,
                                        thresholds=[{ color: 'red', value: null }, { color: 'orange', value: 0 }, { color: 'green', value: 0.25 }]),
                                 g.timeseries('istiod-remote burn rate',
                                              'Error ratio divided by the error budget (1 = spending exactly the budget).',
                                              'none',
                                              [
                                                g.target('cluster:kubecause_istiod_remote_error:ratio_rate%s{%s="$cluster"} / (1 - %g)' % [w, c.cl, cfg.istiodRemoteSLOTarget], w)
                                                for w in ['1h', '6h', '1d', '3d']
                                              ],
                                              w=24,
                                              links=[g.runbookLink(cfg, 'KubecauseIstiodRemoteErrorBudgetBurn')]),
                               ]),

    [file('exporter')]: g.dashboard(cfg,
                                    file('exporter'),
                                    'kubecause / Exporter',
                                    'Health of the kubecause replicas: scrape, watch, processing, caps, resources.',
                                    [
                                      g.stat('Replicas up',
                                             'kubecause replicas scraped successfully.',
                                             'short',
                                             [g.target('sum(up{%(kc)s, %(cl)s="$cluster"})' % c)],
                                             links=[g.runbookLink(cfg, 'KubecauseDown')]),
                                      g.stat('Watching',
                                             'Replicas whose last list/watch of Events succeeded.',
                                             'short',
                                             [g.target('sum(kubecause_watch_up{%(kc)s, %(cl)s="$cluster"})' % c)],
                                             links=[g.runbookLink(cfg, 'KubecauseWatchFailing')]),
                                      g.stat('Tracked Events',
                                             'Live Events held in the compact state (max over replicas).',
                                             'short',
                                             [g.target('max(kubecause_tracked_events{%(kc)s, %(cl)s="$cluster"})' % c)]),
                                      g.stat('Unclassified share',
                                             'Share of occurrences with cause unknown.',
                                             'percentunit',
                                             [g.target('sum(%s) / sum(%s)' % [dd('rate(kubecause_events_total{%(kc)s, %(cl)s="$cluster", cause="unknown"}[$__rate_interval])' % c), dd('rate(kubecause_events_total{%(kc)s, %(cl)s="$cluster"}[$__rate_interval])' % c)])],
                                             links=[g.runbookLink(cfg, 'KubecauseUnclassifiedEvents', 'unknown')]),
                                      g.timeseries('Event notifications',
                                                   'Notifications from the apiserver per operation and replica.',
                                                   'cps',
                                                   [g.target('sum by (instance, op) (rate(kubecause_event_notifications_total{%(kc)s, %(cl)s="$cluster"}[$__rate_interval]))' % c, '{{instance}} {{op}}')]),
                                      g.timeseries('Processing lag (p99)',
                                                   'Time from an occurrence to its counting, 99th percentile per replica.',
                                                   's',
                                                   [g.target('histogram_quantile(0.99, sum by (instance, le) (rate(kubecause_event_processing_lag_seconds_bucket{%(kc)s, %(cl)s="$cluster"}[$__rate_interval])))' % c, '{{instance}}')]),
                                      g.timeseries('Watch errors and relists',
                                                   'List/watch failures and relists per replica.',
                                                   'cps',
                                                   [
                                                     g.target('sum by (instance) (rate(kubecause_watch_errors_total{%(kc)s, %(cl)s="$cluster"}[$__rate_interval]))' % c, 'errors {{instance}}'),
                                                     g.target('sum by (instance) (rate(kubecause_relists_total{%(kc)s, %(cl)s="$cluster"}[$__rate_interval]))' % c, 'relists {{instance}}'),
                                                   ],
                                                   links=[g.runbookLink(cfg, 'KubecauseWatchFailing')]),
                                      g.timeseries('Series of capped metrics',
                                                   'Current series per capped metric, and label sets dropped because a cap was reached.',
                                                   'short',
                                                   [
                                                     g.target('max by (metric) (kubecause_series{%(kc)s, %(cl)s="$cluster"})' % c, '{{metric}}'),
                                                     g.target('max by (metric) (rate(kubecause_series_dropped_total{%(kc)s, %(cl)s="$cluster"}[$__rate_interval]))' % c, 'dropped/s {{metric}}'),
                                                   ],
                                                   links=[g.runbookLink(cfg, 'KubecauseSeriesCapReached')]),
                                      g.timeseries('Memory',
                                                   'Resident memory per replica.',
                                                   'bytes',
                                                   [g.target('process_resident_memory_bytes{%(kc)s, %(cl)s="$cluster"}' % c, '{{instance}}')]),
                                      g.timeseries('CPU',
                                                   'CPU used per replica.',
                                                   'percentunit',
                                                   [g.target('rate(process_cpu_seconds_total{%(kc)s, %(cl)s="$cluster"}[$__rate_interval])' % c, '{{instance}}')]),
                                      g.timeseries('Endpoint check errors',
                                                   'Endpoint check evaluations that ended in error.',
                                                   'cps',
                                                   [g.target('sum by (check) (%s)' % dd('rate(kubecause_endpoints_check_errors_total{%(kc)s, %(cl)s="$cluster"}[$__rate_interval])' % c), '{{check}}')],
                                                   w=24,
                                                   links=[g.runbookLink(cfg, 'KubecauseEndpointCheckFailing')]),
                                    ]),
  },
}
