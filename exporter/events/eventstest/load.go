// Package eventstest holds the Warning Events kubecause's load measurements write: e2e/load's
// generator against a real apiserver and exporter/events' in-process million benchmark, so that
// both measure the same mix.
package eventstest

// CombinedPrefix is what client-go's core/v1 recorder puts before the message of the Event it
// writes after 10 distinct messages of the same (source, object, type, reason).
const CombinedPrefix = "(combined from similar events): "

// KubeletWarnings are real kubelet Warning Events (reason, message), from the seed runbooks and
// the cause table's golden messages.
var KubeletWarnings = [][2]string{
	{"FailedMount", `MountVolume.SetUp failed for volume "remote-kube-api-server" : configmap "mspider-mcpc-remote-kube-api-server" not found`},
	{"FailedMount", `Unable to attach or mount volumes: unmounted volumes=[remote-kube-api-server], unattached volumes=[remote-kube-api-server kube-api-access-ljncs ckube-config]: timed out waiting for the condition`},
	{"FailedMount", `MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found`},
	{"Failed", `Error: configmap "app-config" not found`},
	{"FailedAttachVolume", `Multi-Attach error for volume "pvc-0a5c3d8e-3a4e-4c1f-9d2e-6f2b0e4a7c11" Volume is already exclusively attached to one node and can't be attached to another`},
	{"FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "3f2c1d9e8a7b": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`},
	{"FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = failed to create a sandbox for pod "apigateway-6dc48bf8b6-l8xrw": Error response from daemon: mkdir /var/lib/docker/aufs/mnt/1f09d6c1c9f24e8daaea5bf33a4230de7dbc758e3b22785e8ee21e3e3d921214-init: no space left on device`},
	{"Failed", `Failed to pull image "private/app:1.0": rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/private/app:1.0": failed to resolve reference "docker.io/private/app:1.0": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`},
	{"BackOff", `Back-off restarting failed container app in pod web-0_default(5f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b)`},
	{"Unhealthy", `Readiness probe failed: Get "http://10.244.1.5:8080/healthz": dial tcp 10.244.1.5:8080: connect: connection refused`},
	{"Unhealthy", `Liveness probe failed: Get "http://10.244.1.5:8080/livez": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`},
	{"Evicted", `The node was low on resource: memory. Threshold quantity: 100Mi, available: 91680Ki. Container app was using 1402180Ki, request is 0, has larger consumption of memory.`},
}

// SchedulerWarning is kube-scheduler's FailedScheduling note (events.k8s.io, series updates).
const SchedulerWarning = `0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.`
