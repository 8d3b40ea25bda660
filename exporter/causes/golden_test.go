package causes

import (
	"os"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// golden holds real Event messages: from the seed runbooks (seed S-numbers in the names) and
// real-world docker, containerd and CRI-O wordings. Each names the rule that must classify it.
type golden struct {
	name, reason, message, cause, rule string
}

var goldens = []golden{
	// ---- volume (S1, S2, S8, S9)
	{"S1 configmap not found", "FailedMount", `MountVolume.SetUp failed for volume "remote-kube-api-server" : configmap "mspider-mcpc-remote-kube-api-server" not found`, "configmap_not_found", "volume.configmap_not_found"},
	{"S1 mount timeout", "FailedMount", `Unable to attach or mount volumes: unmounted volumes=[remote-kube-api-server], unattached volumes=[remote-kube-api-server kube-api-access-ljncs ckube-config]: timed out waiting for the condition`, "mount_timeout", "volume.mount_timeout"},
	{"S1 mount timeout, other volume order", "FailedMount", `Unable to attach or mount volumes: unmounted volumes=[remote-kube-api-server], unattached volumes=[ckube-config remote-kube-api-server kube-api-access-ljncs]: timed out waiting for the condition`, "mount_timeout", "volume.mount_timeout"},
	{"mount timeout k8s 1.28+", "FailedMount", `Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[]: context deadline exceeded`, "mount_timeout", "volume.mount_timeout"},
	{"configmap not found in env", "Failed", `Error: configmap "app-config" not found`, "configmap_not_found", "volume.configmap_not_found"},
	{"secret not found in env", "Failed", `Error: secret "db-credentials" not found`, "secret_not_found", "volume.secret_not_found"},
	{"secret volume not found", "FailedMount", `MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found`, "secret_not_found", "volume.secret_not_found"},
	{"configmap key missing in env", "Failed", `Error: couldn't find key LOG_LEVEL in ConfigMap default/app-config`, "config_key_missing", "volume.config_key_missing"},
	{"secret key missing in env", "Failed", `Error: couldn't find key db-password in Secret default/app-secrets`, "config_key_missing", "volume.config_key_missing"},
	{"configmap volume item missing", "FailedMount", `MountVolume.SetUp failed for volume "config" : configmap references non-existent config key: app.yaml`, "config_key_missing", "volume.config_key_missing"},
	{"pvc not found at mount", "FailedMount", `Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data kube-api-access-9xk2p]: error processing PVC default/data-web-0: failed to fetch PVC from API server: persistentvolumeclaims "data-web-0" not found`, "pvc_not_found", "volume.pvc_not_found"},
	{"pvc not found at scheduling", "FailedScheduling", `0/1 nodes are available: persistentvolumeclaim "data-etcd-0" not found. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.`, "pvc_not_found", "volume.pvc_not_found"},
	{"S8 multi-attach exclusive", "FailedAttachVolume", `Multi-Attach error for volume "pvc-0a5c3d8e-3a4e-4c1f-9d2e-6f2b0e4a7c11" Volume is already exclusively attached to one node and can't be attached to another`, "volume_multi_attach", "volume.multi_attach"},
	{"S8 multi-attach used by pod", "FailedAttachVolume", `Multi-Attach error for volume "pvc-0a5c3d8e-3a4e-4c1f-9d2e-6f2b0e4a7c11" Volume is already used by pod(s) web-0`, "volume_multi_attach", "volume.multi_attach"},
	// kube-controller-manager 1.37's wordings (e2e TestMultiAttach, exporter/causes/testdata/real-node.yaml).
	{"S8 waiting for detach, used by pod", "FailedAttachVolume", `Waiting for detach for volume "orders-db" Volume is already used by pod(s) orders-db-6d4f8b7c9-k2x7q`, "volume_multi_attach", "volume.multi_attach"},
	{"S8 waiting for detach, pods in other namespaces", "FailedAttachVolume", `Waiting for detach for volume "orders-db-copy" Volume is already used by 1 pod(s) in different namespaces`, "volume_multi_attach", "volume.multi_attach"},
	{"S8 waiting for detach, exclusively attached", "FailedAttachVolume", `Waiting for detach for volume "mysql-data" Volume is already exclusively attached to one node, waiting on detach before it can be attached to another node`, "volume_multi_attach", "volume.multi_attach"},
	{"S8 attach failed", "FailedAttachVolume", `AttachVolume.Attach failed for volume "pvc-0a5c3d8e" : rpc error: code = Internal desc = Could not attach volume "vol-0abc" to node "i-0def": attachment of disk "vol-0abc" failed, expected device to be attached but was attaching`, "volume_attach_failed", "volume.attach_other"},
	// The kubelet cannot reach the node plugin's socket (pkg/volume/csi/csi_mounter.go SetUpAt,
	// csi_block.go stageVolumeForBlock; grpc-go's dial error, with and without the colon of
	// grpc-go 1.52+, and Windows' refusal): the plugin is not running on the node (table 1.17.0).
	{"CSI node plugin socket missing", "FailedMount", `MountVolume.SetUp failed for volume "pvc-7a1e3c5b" : kubernetes.io/csi: mounter.SetUpAt failed to check for STAGE_UNSTAGE_VOLUME capability: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix /var/lib/kubelet/plugins/ebs.csi.aws.com/csi.sock: connect: no such file or directory"`, "csi_driver_not_registered", "volume.csi_node_plugin_down"},
	{"CSI node plugin refusing, block", "FailedMapVolume", `MapVolume.SetUpDevice failed for volume "pvc-7a1e3c5b" : kubernetes.io/csi: blockMapper.stageVolumeForBlock failed to check STAGE_UNSTAGE_VOLUME capability: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing dial unix /var/lib/kubelet/plugins/rbd.csi.ceph.com/csi.sock: connect: connection refused"`, "csi_driver_not_registered", "volume.csi_node_plugin_down"},
	{"CSI node plugin refusing, Windows", "FailedMount", `MountVolume.SetUp failed for volume "secrets" : kubernetes.io/csi: mounter.SetUpAt failed to determine if the node service has VOLUME_MOUNT_GROUP capability: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix C:\\var\\lib\\kubelet\\plugins\\disk.csi.azure.com\\csi.sock: connect: No connection could be made because the target machine actively refused it."`, "csi_driver_not_registered", "volume.csi_node_plugin_down"},
	// A CSI driver's own error about a socket it dials (not the kubelet's) stays the driver's.
	{"CSI driver's own dial error", "FailedMount", `MountVolume.MountDevice failed for volume "pvc-7a1e3c5b" : rpc error: code = Internal desc = failed to connect to agent: dial tcp 10.0.0.5:9500: connect: connection refused`, "csi_rpc_error", "volume.csi_rpc_error"},
	{"S8 wait for attach", "FailedMount", `MountVolume.WaitForAttach failed for volume "pvc-0a5c3d8e" : timed out waiting for external-attacher of ebs.csi.aws.com CSI driver to attach volume vol-0abc`, "volume_attach_failed", "volume.attach_failed"},
	// The external-attacher's attach error when the driver's node plugin has not registered on the node
	// (kubernetes-csi/external-attacher pkg/controller/csi_handler.go getNodeID; before v2.2
	// pkg/controller/util.go GetNodeIDFromNode), passed on by the kubelet's WaitForAttach
	// (pkg/volume/csi/csi_attacher.go verifyAttachmentStatus).
	{"CSINode without the driver, at WaitForAttach", "FailedMount", `MountVolume.WaitForAttach failed for volume "pvc-0a5c3d8e-3a4e-4c1f-9d2e-6f2b0e4a7c11" : CSINode worker-2 does not contain driver ebs.csi.aws.com`, "csi_driver_not_registered", "volume.csi_driver_not_registered"},
	{"no NodeID for the driver (attacher before v2.2)", "FailedAttachVolume", `AttachVolume.Attach failed for volume "pvc-0a5c3d8e-3a4e-4c1f-9d2e-6f2b0e4a7c11" : cannot find NodeID for driver "rbd.csi.ceph.com" for node "worker-2"`, "csi_driver_not_registered", "volume.csi_driver_not_registered"},
	// The CSI driver's NodeExpandVolume failing while the kubelet mounts a resized volume
	// (pkg/volume/csi/expander.go NodeExpand, operation_generator.go "MountVolume.Setup failed while
	// expanding volume").
	{"NodeExpand rpc error at mount", "FailedMount", `MountVolume.Setup failed while expanding volume for volume "pvc-0a5c3d8e-3a4e-4c1f-9d2e-6f2b0e4a7c11" : Expander.NodeExpand failed to expand the volume : rpc error: code = Internal desc = resize2fs: Permission denied to resize filesystem`, "csi_rpc_error", "volume.csi_rpc_error"},
	{"S9 subpath after configmap change", "Failed", `Error: failed to create containerd task: OCI runtime create failed: container_linux.go:345: starting container process caused "process_linux.go:424: container init caused \"rootfs_linux.go:58: mounting \\\"/var/lib/kubelet/pods/211d53f4-d08c-11e9-b0a7-b6655eaf02a6/volume-subpaths/manage-config-volume/manage/0\\\" to rootfs \\\"/run/containerd/io.containerd.runtime.v1.linux/k8s.io/e6746201faa1dfe7f3251b8c30d59ebf613d99715f3b800740e587e681d2a903/rootfs\\\" at \\\"/run/containerd/io.containerd.runtime.v1.linux/k8s.io/e6746201faa1dfe7f3251b8c30d59ebf613d99715f3b800740e587e681d2a903/rootfs/app/resources/application.properties\\\" caused \\\"no such file or directory\\\"\"": unknown`, "subpath_failed", "volume.subpath_failed"},
	{"subpath prepare", "Failed", `Error: failed to prepare subPath for volumeMount "config" of container "app"`, "subpath_failed", "volume.subpath_failed"},
	{"nfs mount failed", "FailedMount", `MountVolume.SetUp failed for volume "nfs" : mount failed: exit status 32 Mounting command: mount Mounting arguments: -t nfs 10.0.0.5:/exports /var/lib/kubelet/pods/5f1e/volumes/kubernetes.io~nfs/nfs Output: mount.nfs: access denied by server while mounting 10.0.0.5:/exports`, "nfs_mount_failed", "volume.nfs"},
	// The NFS CSI driver's mount that did not return in time (kubernetes-csi/csi-driver-nfs v4.13.4
	// pkg/nfs/nodeserver.go:158, "mount volume %s to %s timeout after %ds", under the kubelet's SetUp).
	{"nfs csi mount timeout", "FailedMount", nfsCSIMountTimeout, "nfs_mount_failed", "volume.nfs"},
	// The Azure Files CSI driver's timeout on an NFS share (kubernetes-sigs/azurefile-csi-driver v1.35.7
	// pkg/azurefile/nodeserver.go:631 and :638, under the kubelet's MountDevice).
	{"azure files nfs mount timeout", "FailedMount", `MountVolume.MountDevice failed for volume "pvc-0c7e3bd2-5b9e-4f0e-9a43-2c1f6f1c7d11" : rpc error: code = Internal desc = volume(mc_rg_aks_eastus#f5713de20cde511e8ba4900#pvc-0c7e3bd2-5b9e-4f0e-9a43-2c1f6f1c7d11###default) mount f5713de20cde511e8ba4900.file.core.windows.net:/f5713de20cde511e8ba4900/pvc-0c7e3bd2-5b9e-4f0e-9a43-2c1f6f1c7d11 on /var/lib/kubelet/plugins/kubernetes.io/csi/file.csi.azure.com/3f1a2b4c/globalmount failed with mount operation timed out after 90 seconds: source=f5713de20cde511e8ba4900.file.core.windows.net:/f5713de20cde511e8ba4900/pvc-0c7e3bd2-5b9e-4f0e-9a43-2c1f6f1c7d11, target=/var/lib/kubelet/plugins/kubernetes.io/csi/file.csi.azure.com/3f1a2b4c/globalmount`, "nfs_mount_failed", "volume.nfs"},
	// The Azure Disk CSI driver's dangling attach refused (kubernetes-sigs/azuredisk-csi-driver v1.34.5
	// pkg/azuredisk/controllerserver.go:760, under the attach-detach controller's AttachVolume.Attach).
	{"azure disk attached to another node", "FailedAttachVolume", `AttachVolume.Attach failed for volume "pvc-1fa755a6-0144-4ee0-8cec-b2cbf46c4a0d" : rpc error: code = FailedPrecondition desc = volume /subscriptions/b9d2281e-dcd5-4dfd-9a97-0d50377cdf76/resourceGroups/mc_rg_aks_eastus/providers/Microsoft.Compute/disks/pvc-1fa755a6-0144-4ee0-8cec-b2cbf46c4a0d still has VolumeAttachments on node aks-nodepool1-12345678-vmss000003, refusing dangling detach`, "volume_multi_attach", "volume.multi_attach"},
	// EC2's VolumeInUse: when attaching, the volume is another instance's (kubernetes-sigs/aws-ebs-csi-driver
	// v1.64.0 pkg/driver/controller.go:516 over pkg/cloud/cloud.go:1316, aws-sdk-go-v2's error form, EC2's
	// message as aws/aws-sdk-java#1623 logs it); when deleting a released volume it is still on its own node,
	// no multi-attach (the driver's DeleteVolume error as mesosphere/dcos-docs-site
	// pages/dkp/konvoy/1.5/storage/operations/index.md shows it, the provisioner's VolumeFailedDelete).
	{"ebs attach, volume in use by another instance", "FailedAttachVolume", `AttachVolume.Attach failed for volume "pvc-0c7e3bd2-5b9e-4f0e-9a43-2c1f6f1c7d11" : rpc error: code = Internal desc = Could not attach volume "vol-0a1b2c3d4e5f60718" to node "i-0123456789abcdef0": could not attach volume "vol-0a1b2c3d4e5f60718" to node "i-0123456789abcdef0": operation error EC2: AttachVolume, https response error StatusCode: 400, RequestID: 6e1c4f0a-2b7d-4c8e-9f3a-1d2e3f4a5b6c, api error VolumeInUse: vol-0a1b2c3d4e5f60718 is already attached to an instance`, "volume_multi_attach", "volume.multi_attach_ec2"},
	{"ebs delete of a volume still attached", "VolumeFailedDelete", `rpc error: code = Internal desc = Could not delete volume ID "vol-0473776ae2aed3751": DeleteDisk could not delete volume: VolumeInUse: Volume vol-0473776ae2aed3751 is currently attached to i-0630c41e683f2898f status code: 400, request id: bdf9c704-eee0-4817-8e1a-8d6c1c9750c8`, "unknown", ""},
	{"block map failed", "FailedMapVolume", `MapVolume.SetUpDevice failed for volume "pvc-0a5c3d8e" : kubernetes.io/csi: blockMapper.SetUpDevice failed to get CSI client: driver name ebs.csi.aws.com not found in the list of registered CSI drivers`, "csi_driver_not_registered", "volume.csi_driver_not_registered"},

	// ---- storage (S2)
	{"S2 no storage class set", "FailedBinding", `no persistent volumes available for this claim and no storage class is set`, "no_storage_class", "storage.storage_class_not_found"},
	{"S2 storage class missing", "ProvisioningFailed", `storageclass.storage.k8s.io "local-path" not found`, "no_storage_class", "storage.storage_class_not_found"},
	{"provisioner error", "ProvisioningFailed", `failed to provision volume with StorageClass "csi-disk": rpc error: code = ResourceExhausted desc = quota exceeded for resource disks`, "provisioning_failed", "storage.provisioning_failed"},
	{"bound to other claim", "FailedBinding", `volume "pv-data" already bound to a different claim.`, "provisioning_failed", "storage.provisioning_failed"},

	// ---- sandbox (S10, S11, S13, S14, S15, S16)
	{"S10 no space left", "FailedCreatePodSandBox", `(combined from similar events): Failed create pod sandbox: rpc error: code = Unknown desc = failed to create a sandbox for pod "apigateway-6dc48bf8b6-l8xrw": Error response from daemon: mkdir /var/lib/docker/aufs/mnt/1f09d6c1c9f24e8daaea5bf33a4230de7dbc758e3b22785e8ee21e3e3d921214-init: no space left on device`, "disk_full", "sandbox.disk_full"},
	{"image gc failed", "ImageGCFailed", `failed to garbage collect required amount of images. Attempted to free 10737418240 bytes, but only found 0 bytes eligible to free.`, "disk_full", "sandbox.image_gc_failed"},
	{"S11 sandbox changed", "SandboxChanged", `Pod sandbox changed, it will be killed and re-created.`, "sandbox_changed", "sandbox.changed"},
	{"S11 pause killed by tiny limit", "FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod "web-0": Error response from daemon: OCI runtime create failed: container_linux.go:348: starting container process caused "process_linux.go:301: running exec setns process for init caused \"signal: killed\"": unknown`, "memory_limit_too_small", "sandbox.memory_limit_too_small"},
	{"containerd init OOM-killed", "Failed", `Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: container init was OOM-killed (memory limit too low?): unknown`, "memory_limit_too_small", "sandbox.memory_limit_too_small"},
	{"S13 containerd calico", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "3f2c1d9e8a7b": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`, "cni_error", "sandbox.cni"},
	{"S13 containerd calico i/o timeout", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "3f2c1d9e8a7b": plugin type="calico" failed (add): error getting ClusterInformation: Get "https://10.96.0.1:443/apis/crd.projectcalico.org/v1/clusterinformations/default": dial tcp 10.96.0.1:443: i/o timeout`, "cni_error", "sandbox.cni"},
	{"S13 containerd flannel", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "9a8b7c": plugin type="flannel" failed (add): loadFlannelSubnetEnv failed: open /run/flannel/subnet.env: no such file or directory`, "cni_error", "sandbox.cni"},
	{"S13 CRI-O CNI", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create pod network sandbox k8s_web-0_default_1234_0(abcd): error adding pod default_web-0 to CNI network "multus-cni-network": plugin type="multus" name="multus-cni-network" failed (add): Multus: [default/web-0]: error getting pod: Unauthorized`, "cni_error", "sandbox.cni"},
	{"S13 docker IP pool exhausted", "FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = NetworkPlugin cni failed to set up pod "web-0_default" network: failed to allocate for range 0: no IP addresses available in range set: 10.244.1.1-10.244.1.254`, "cni_error", "sandbox.cni"},
	{"CNI teardown", "FailedKillPod", `error killing pod: failed to "KillPodSandbox" for "1234" with KillPodSandboxError: "rpc error: code = Unknown desc = failed to destroy network for sandbox \"abc\": plugin type=\"calico\" failed (delete): error getting ClusterInformation: connection is unauthorized: Unauthorized"`, "cni_error", "sandbox.cni"},
	// A CNI plugin killed without a word: the plugin error CRI-O logged in crc-org/snc#203 ("Error
	// while adding pod to CNI network \"multus-cni-network\": netplugin failed with no error message:
	// signal: killed", libcni pkg/invoke/raw_exec.go) under containerd's wrappers (libcni api.go:521,
	// internal/cri/server/sandbox_run.go:267 and sandbox_stop.go:119): the plugin's failure, not the
	// pod's memory limit.
	{"CNI plugin killed", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "4e4719cbaa7e05ccee9b41be37f362c67df85c6eb9d0c2c4e20a5ed3321382aa": plugin type="multus" name="multus-cni-network" failed (add): netplugin failed with no error message: signal: killed`, "cni_error", "sandbox.cni_plugin_killed"},
	{"CNI plugin killed on teardown", "FailedKillPod", `error killing pod: failed to "KillPodSandbox" for "0b7e9a34-6f1d-4c55-9a9e-3c2f2b1e8d11" with KillPodSandboxError: "rpc error: code = Unknown desc = failed to destroy network for sandbox \"4e4719cbaa7e05ccee9b41be37f362c67df85c6eb9d0c2c4e20a5ed3321382aa\": plugin type=\"multus-shim\" name=\"multus-cni-network\" failed (delete): netplugin failed with no error message: signal: killed"`, "cni_error", "sandbox.cni_plugin_killed"},
	// Multus's own Event for a missing network-attachment-definition: "cannot find a
	// network-attachment-definition (%s) in namespace (%s): %v" (k8snetworkplumbingwg/multus-cni v4.3.0
	// pkg/k8sclient/k8sclient.go:297) around the API server's NotFound.
	{"Multus NAD missing", "NoNetworkFound", `cannot find a network-attachment-definition (macvlan-conf) in namespace (default): network-attachment-definitions.k8s.cni.cncf.io "macvlan-conf" not found`, "cni_error", "sandbox.multus_no_network"},
	{"network not ready", "NetworkNotReady", `network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized`, "cni_error", "sandbox.network_not_ready"},
	{"S14 ttrpc shim", "FailedCreatePodSandBox", `(combined from similar events): Failed create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod "nginx-7db9fccd9b-2j6dh": Error response from daemon: ttrpc: client shutting down: read unix @->@/containerd-shim/moby/de2bfeefc999af42783115acca62745e6798981dff75f4148fae8c086668f667/shim.sock: read: connection reset by peer: unknown`, "runtime_shim_error", "sandbox.runtime_shim"},
	{"S14 sandbox changed", "SandboxChanged", `Pod sandbox changed, it will be killed and re-created.`, "sandbox_changed", "sandbox.changed"},
	{"S15 context deadline", "FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = failed to create a sandbox for pod "lomp-ext-d8c8b8c46-4v8tl": operation timeout: context deadline exceeded`, "runtime_timeout", "sandbox.runtime_timeout"},
	{"S15 name conflict", "FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = failed to create a sandbox for pod "lomp-ext-d8c8b8c46-4v8tl": Error response from daemon: Conflict. The container name "/k8s_POD_lomp-ext-d8c8b8c46-4v8tl_default_65046a06-f795-11e9-9bb6-b67fb7a70bad_0" is already in use by container "30aa3f5847e0ce89e9d411e76783ba14accba7eb7743e605a10a9a862a72c1e2". You have to remove (or rename) that container to be able to reuse that name.`, "sandbox_name_conflict", "sandbox.name_conflict"},
	{"containerd sandbox name reserved", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to reserve sandbox name "web-0_default_1234_0": name "web-0_default_1234_0" is reserved for "abcd"`, "sandbox_name_conflict", "sandbox.name_conflict"},
	{"CRI-O container name reserved", "Failed", `Error: error reserving ctr name k8s_app_web-0_default_1234_0 for id abcd: name is reserved`, "sandbox_name_conflict", "sandbox.name_conflict"},
	{"kill pod timeout", "FailedKillPod", `error killing pod: failed to "KillPodSandbox" for "1234" with KillPodSandboxError: "rpc error: code = DeadlineExceeded desc = context deadline exceeded"`, "runtime_timeout", "sandbox.runtime_timeout"},
	{"S16 SELinux keycreate", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod "ecc-hostpath-provisioner-8jbhf": Error response from daemon: OCI runtime create failed: container_linux.go:349: starting container process caused "process_linux.go:449: container init caused \"write /proc/self/attr/keycreate: permission denied\"": unknown`, "selinux_denied", "sandbox.selinux_denied"},
	// Kubelets before 1.5 (dockertools docker_manager.go) named the sandbox's re-creation InfraChanged.
	{"sandbox re-created, kubelet 1.4", "InfraChanged", `Pod infrastructure changed, it will be killed and re-created.`, "sandbox_changed", "sandbox.changed"},
	// The device manager's checkpoint on a full kubelet disk (lifecycle/predicate.go, devicemanager
	// writeCheckpoint) under the admission reason.
	{"device checkpoint on a full disk", "UnexpectedAdmissionError", `Update plugin resources failed due to failed to write checkpoint file "kubelet_internal_checkpoint": write /var/lib/kubelet/device-plugins/.3817264905: no space left on device, which is unexpected.`, "disk_full", "node.admission_disk_full"},
	// Docker 17.03-17.06: a repository the registry will not show (missing or private) and, after
	// "errors:", a registry's error list one per line (distribution's errcode).
	{"Docker 17 no pull access", "Failed", `Failed to pull image "registry.example.com/team/api:2.1": rpc error: code = Unknown desc = Error response from daemon: repository registry.example.com/team/api not found: does not exist or no pull access`, "image_auth_failed", "image.auth_failed"},
	{"Docker registry error list", "Failed", "Failed to pull image \"team/api:2.1\": rpc error: code = Unknown desc = Error response from daemon: Get https://registry-1.docker.io/v2/team/api/manifests/2.1: errors:\ndenied: requested access to the resource is denied\nunauthorized: authentication required\n", "image_auth_failed", "image.auth_failed"},
	// containerd's WithProcessArgs: neither the pod nor the image gives a command.
	{"no command specified", "Failed", `Error: failed to generate container "9f1c2e4a6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a" spec: no command specified`, "container_config_error", "container.config_error"},
	{"sandbox other", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error setting cgroup config for procHooks process: unable to freeze: unknown`, "sandbox_failed", "sandbox.other"},
	// The kubelet's current prefix (kuberuntime_manager.go) around grpc-go's ErrConnClosing: the
	// CRI connection closing under the kubelet (containerd or CRI-O restarting or crashing).
	{"CRI connection closed", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unavailable desc = transport is closing`, "runtime_unavailable", "sandbox.runtime_unavailable"},
	// CRI-O's name index (internal/lib/container_server.go): "error reserving pod name %q" (1.11-1.13),
	// "error reserving ctr name %s for id %s" (1.15-1.16, without the index's own error).
	{"CRI-O pod name reserved (1.13)", "FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = error reserving pod name "k8s_web-0_default_5f1c2a3b-4d5e-11e9-8f1a-0a1b2c3d4e5f_0"`, "sandbox_name_conflict", "sandbox.name_conflict"},
	{"CRI-O container name reserved (1.16)", "Failed", `Error: error reserving ctr name k8s_app_web-0_default_5f1c2a3b-4d5e-11e9-8f1a-0a1b2c3d4e5f_1 for id 3c9e1f0a7b2d4c6e8f1a3b5d7c9e0f2a4b6c8d0e1f3a5b7c9d0e2f4a6b8c0d1e3f`, "sandbox_name_conflict", "sandbox.name_conflict"},
	// CRI-O's networkStart (server/sandbox_network.go) around the CNI plugin's error: flannel's bridge
	// plugin, and Cilium's CNI plugin without its agent (plugins/cilium-cni, "Cilium agent" since 1.16).
	{"CRI-O CNI setup, bridge address", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create pod network sandbox k8s_web-0_default_5f1c2a3b-4d5e-11e9-8f1a-0a1b2c3d4e5f_0(7d2c4e6f8a0b1c3d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d0e): failed to set bridge addr: "cni0" already has an IP address different from 10.244.1.1/24`, "cni_error", "sandbox.cni"},
	{"CRI-O CNI setup, Cilium agent down", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create pod network sandbox k8s_web-0_default_5f1c2a3b-4d5e-11e9-8f1a-0a1b2c3d4e5f_0(7d2c4e6f8a0b1c3d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d0e): unable to connect to Cilium agent: failed to create cilium agent client after 30.000000 seconds timeout: Get "http://localhost/v1/config": dial unix /var/run/cilium/cilium.sock: connect: no such file or directory
Is the agent running?`, "cni_error", "sandbox.cni"},
	// CRI-O asking the CNI plugin for the pod's network after the ADD (server/sandbox_network.go
	// networkStart, ocicni GetPodNetworkStatus: "error checking pod %s for CNI network %q: %v").
	{"CRI-O CNI status check", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get network status for pod sandbox k8s_web-0_default_5f1c2a3b-4d5e-11e9-8f1a-0a1b2c3d4e5f_0(7d2c4e6f8a0b1c3d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d0e): error checking pod default_web-0 for CNI network "k8s-pod-network": invalid version "": the version is empty`, "cni_error", "sandbox.cni"},
	{"CRI-O CNI result unreadable", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get network JSON for pod sandbox k8s_web-0_default_5f1c2a3b-4d5e-11e9-8f1a-0a1b2c3d4e5f_0(7d2c4e6f8a0b1c3d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d0e): unsupported CNI result version "0.1.0"`, "cni_error", "sandbox.cni"},
	// AWS security groups for pods: the VPC resource controller's Event on the pod when it cannot create
	// the pod's branch ENI (aws/amazon-vpc-resource-controller-k8s pkg/provider/branch/provider.go
	// CreateAndAnnotateResources, "failed to allocate branch ENI to pod: %v"; EC2's InvalidGroup.NotFound
	// as aws-sdk-go v1 prints it).
	{"branch ENI allocation failed", "BranchAllocationFailed", `failed to allocate branch ENI to pod: InvalidGroup.NotFound: The security group 'sg-0a1b2c3d4e5f60718' does not exist in VPC 'vpc-0f1e2d3c4b5a69788'
	status code: 400, request id: 5f1c2a3b-4d5e-11e9-8f1a-0a1b2c3d4e5f`, "cni_error", "sandbox.branch_eni_allocation_failed"},
	// istio-cni's repair controller on a pod the CNI plugin did not set up (istio/istio 1.30.3
	// cni/pkg/repair/repaircontroller.go deleteBrokenPod: a fixed message).
	{"istio-cni broken pod deleted", "DeleteBrokenPod", `pod detected as broken, deleted`, "cni_error", "sandbox.istio_cni_broken_pod"},
	{"sandbox status", "FailedPodSandBoxStatus", `rpc error: code = NotFound desc = an error occurred when try to find sandbox: not found`, "sandbox_failed", "sandbox.other"},

	// ---- image (S12)
	{"S12 no basic auth credentials", "Failed", `Failed to pull image "docker.com:8080/public/2048:latest": rpc error: code = Unknown desc = Error response from daemon: Get http://docker.com:8080/v2/public/2048/manifests/latest: no basic auth credentials`, "image_auth_failed", "image.auth_failed"},
	{"S12 back-off pulling", "BackOff", `Back-off pulling image "docker.com:8080/public/2048:latest"`, "image_pull_backoff", "image.backoff"},
	{"S12 ImagePullBackOff summary", "Failed", `Error: ImagePullBackOff`, "image_pull_backoff", "image.error_summary"},
	{"S12 ErrImagePull summary", "Failed", `Error: ErrImagePull`, "image_pull_backoff", "image.error_summary"},
	// The CRI's own error names as the kubelet's summary (k8s.io/cri-api pkg/errors; CRI-O
	// server/image_pull.go, internal/storage/image.go).
	{"signature policy summary", "Failed", `Error: SignatureValidationFailed`, "image_pull_backoff", "image.error_summary"},
	{"registry refused summary", "Failed", `Error: RegistryUnavailable`, "image_registry_unreachable", "image.registry_unreachable"},
	// Wordings of older releases, from the template inventory read at their tags
	// (testdata/templates/kubernetes-1.2.yaml … kubernetes-1.24.yaml, openshift-origin-3.11.yaml,
	// machine-config-operator.yaml; table 1.18.0).
	{"kubelet 1.2 GCE PD attach", "FailedMount", `Unable to mount volumes for pod "web-0_default(6d1c8a5e-ec2e-11e5-9b3a-42010af00002)": Could not attach GCE PD "pd-data". Timeout waiting for mount paths to be created.`, "volume_attach_failed", "volume.attach_legacy"},
	{"kubelet 1.2 claim not bound", "FailedMount", `Unable to mount volumes for pod "web-0_default(6d1c8a5e-ec2e-11e5-9b3a-42010af00002)": The claim data-web-0 is not yet bound to a volume`, "scheduling_pvc_unbound", "volume.claim_not_bound"},
	{"kubelet 1.13 local PV node affinity", "FailedMount", `MountVolume.NodeAffinity check failed for volume "local-pv-3f2a1b" : No matching NodeSelectorTerms`, "scheduling_volume_node_affinity", "volume.node_affinity_check"},
	{"kubelet 1.2 out of disk", "OutOfDisk", `Cannot start the pod due to lack of disk space.`, "evicted_disk", "node.admission_out_of_disk"},
	{"daemonset 1.9 disk pressure", "FailedPlacement", `failed to place pod on "node-3": NodeUnderDiskPressure`, "node_disk_pressure", "scheduling.placement_disk_pressure"},
	{"daemonset 1.13 memory pressure", "FailedPlacement", `failed to place pod on "node-3": node(s) had memory pressure`, "node_memory_pressure", "scheduling.placement_memory_pressure"},
	{"daemonset 1.13 not ready", "FailedPlacement", `failed to place pod on "node-3": node(s) were not ready`, "node_not_ready", "scheduling.placement_not_ready"},
	{"openshift-sdn lost interface", "NetworkFailed", `The pod's network interface has been lost and the pod will be stopped.`, "cni_error", "sandbox.openshift_sdn_network_lost"},
	{"machine-config drain", "Drain", `Draining node to update config.`, "node_cordoned", "node.drained"},
	{"machine-config no drain", "Drain", `Drain not required, skipping`, "unknown", ""},
	{"orphaned provisioned volume", "ProvisioningCleanupFailed", `Error cleaning provisioned volume for claim default/data-web-0: error deleting EBS volume "vol-0a1b2c3d4e5f60718" since volume is currently attached to "i-0123456789abcdef0"`, "unknown", "guard.provisioning_cleanup"},
	// node-problem-detector's default rules and Docker's own errors (testdata/templates/
	// node-problem-detector.yaml, docker-engine.yaml, cri-dockerd.yaml).
	{"npd global oom", "OOMKilling", `Out of memory: Killed process 4121 (python3) total-vm:12584912kB, anon-rss:7340032kB, file-rss:4096kB, shmem-rss:0kB, UID:0 pgtables:15360kB oom_score_adj:1000`, "node_system_oom", "node.kernel_system_oom"},
	{"npd kubelet unhealthy", "KubeletUnhealthy", `Node condition KubeletUnhealthy is now: True, reason: KubeletUnhealthy, message: "kubelet:kubelet was found unhealthy; repair flag : true"`, "node_not_ready", "node.kubelet_unhealthy"},
	{"npd containerd unhealthy", "ContainerdUnhealthy", `Node condition ContainerRuntimeUnhealthy is now: True, reason: ContainerdUnhealthy, message: "cri:containerd was found unhealthy; repair flag : true"`, "runtime_unavailable", "node.runtime_unhealthy"},
	{"npd corrupt docker image", "CorruptDockerImage", `Error trying v2 registry: failed to register layer: rename /var/lib/docker/image/overlay2/layerdb/tmp/write-set-091837243 /var/lib/docker/image/overlay2/layerdb/sha256/5216338b40a7b96416b8b9858974bbe4acc3096ee60acbc4dfb1ee02aecceb10: directory not empty`, "image_pull_failed", "node.docker_image_corrupt"},
	{"npd docker start failure", "DockerContainerStartupFailure", `OCI runtime start failed: container process is already dead: unknown`, "container_create_failed", "node.docker_start_failure"},
	{"dockershim pause inspect, daemon down", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to inspect sandbox image "registry.k8s.io/pause:3.9": Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?`, "runtime_unavailable", "sandbox.inspect_runtime_unavailable"},
	{"dockershim pause inspect, timeout", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to inspect sandbox image "registry.k8s.io/pause:3.9": operation timeout: context deadline exceeded`, "runtime_timeout", "sandbox.inspect_runtime_timeout"},
	// Network controllers' own Events on the pod (testdata/templates/kube-ovn.yaml, ovn-kubernetes.yaml,
	// amazon-vpc-resource-controller-k8s.yaml).
	{"vpc resource controller warm pool", "ResourceAllocationFailed", `Warm pool for resource vpc.amazonaws.com/PrivateIPv4Address is currently empty, will retry in 600ms`, "cni_error", "sandbox.vpc_resource_allocation_failed"},
	{"kube-ovn logical port", "CreateOVNPortFailed", `create logical switch port web-6d4cf56db6-8xk2p.default: not connected`, "cni_error", "sandbox.ovn_pod_network_failed"},
	{"ovn-kubernetes logical port", "ErrorAddingResource", `addLogicalPort failed for default/web-6d4cf56db6-8xk2p: timed out waiting for logical switch in logical switch cache "worker-3" subnet: context deadline exceeded`, "cni_error", "sandbox.ovn_kubernetes_logical_port"},
	// A CSI driver's own lookup of a Secret (csi-driver-smb pkg/smb/nodeserver.go; azurefile-csi-driver).
	{"csi driver's own secret", "FailedMount", `MountVolume.SetUp failed for volume "smb-inline" : rpc error: code = Internal desc = Error getting username and password from secret smbcreds in namespace default: could not get secret(smbcreds): secrets "smbcreds" not found`, "csi_rpc_error", "volume.csi_own_object_not_found"},
	// containerd 1.6's fetcher finding the manifest but not a layer (testdata/templates/containerd-1.6.yaml).
	{"containerd layer missing", "Failed", `Failed to pull image "registry.example.com/team/api:1.4.2": rpc error: code = NotFound desc = failed to pull and unpack image "registry.example.com/team/api:1.4.2": failed to copy: httpReadSeeker: failed open: content at https://registry.example.com/v2/team/api/blobs/sha256:a2318d6c47ec9cac5acc500c47c79602bcf953cec711a18bc898911a0984365b not found: not found`, "image_pull_failed", "image.blob_missing"},
	// OpenShift's kube-apiserver bounds each admission plugin (openshift/kubernetes admissiontimeout,
	// 13 s); containerd 1.1-1.2's resolver (testdata/templates/containerd-1.2.yaml); a scheduler that
	// writes the resource reason in lower case (table 1.20.0).
	{"openshift admission timeout", "FailedCreate", `Error creating: Internal error occurred: admission plugin "MutatingAdmissionWebhook" failed to complete mutation in 13s`, "workload_create_timeout", "workload.create_timeout"},
	{"containerd 1.2 image not found", "Failed", `Failed to pull image "registry.example.com/team/api:1.4.2": rpc error: code = Unknown desc = failed to resolve image "registry.example.com/team/api:1.4.2": registry.example.com/team/api:1.4.2 not found`, "image_not_found", "image.not_found"},
	{"lower-case insufficient", "FailedScheduling", `0/4 nodes are available: 4 insufficient nvidia.com/gpu.`, "scheduling_insufficient_resources", "scheduling.insufficient_resources"},
	// runc 1.1's "error mounting %q to rootfs at %q" for a ConfigMap volume mounted onto a file.
	{"configmap volume onto a file", "Failed", `Error: failed to start container "web": Error response from daemon: failed to create shim: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error mounting "/var/lib/kubelet/pods/0b6a7f9e-3c1d-4e2f-8a5b-6c7d8e9f0a1b/volumes/kubernetes.io~configmap/site" to rootfs at "/usr/share/nginx/html/index.html": mount /var/lib/kubelet/pods/0b6a7f9e-3c1d-4e2f-8a5b-6c7d8e9f0a1b/volumes/kubernetes.io~configmap/site:/usr/share/nginx/html/index.html (via /proc/self/fd/6), flags: 0x5000: not a directory: unknown`, "container_config_error", "container.volume_over_file"},
	// Windows' HCS_E_IMAGE_MISMATCH through hcsshim (Docker's "encountered an error during
	// hcsshim::System::Start: failure in a Windows system call: …", containerd's hcs::CreateComputeSystem).
	{"windows image mismatch, docker", "Failed", `Error: failed to start container "web": Error response from daemon: container 2f1c8e7a encountered an error during hcsshim::System::Start: failure in a Windows system call: The container operating system does not match the host operating system. (0xc0370101)`, "image_wrong_architecture", "container.wrong_architecture"},
	{"windows image mismatch, containerd", "Failed", `Error: failed to create containerd task: failed to create shim task: hcs::CreateComputeSystem web: The container operating system does not match the host operating system.: unknown`, "image_wrong_architecture", "container.wrong_architecture"},
	{"S12 docker insecure registry", "Failed", `Failed to pull image "docker.com:8080/public/2048:latest": rpc error: code = Unknown desc = Error response from daemon: Get https://docker.com:8080/v2/: http: server gave HTTP response to HTTPS client`, "image_insecure_registry", "image.insecure_registry"},
	{"containerd insecure registry", "Failed", `Failed to pull image "10.6.0.5:5000/app:v1": rpc error: code = Unknown desc = failed to pull and unpack image "10.6.0.5:5000/app:v1": failed to resolve reference "10.6.0.5:5000/app:v1": failed to do request: Head "https://10.6.0.5:5000/v2/app/manifests/v1": http: server gave HTTP response to HTTPS client`, "image_insecure_registry", "image.insecure_registry"},
	{"S12 pause image on gcr.io (docker)", "FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = failed pulling image "k8s.gcr.io/pause:3.2": Error response from daemon: Get https://k8s.gcr.io/v2/: net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)`, "sandbox_image_pull_failed", "sandbox.image_pull_failed"},
	{"S12 pause image unreachable (containerd)", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox image "registry.k8s.io/pause:3.9": failed to pull image "registry.k8s.io/pause:3.9": failed to pull and unpack image "registry.k8s.io/pause:3.9": failed to resolve reference "registry.k8s.io/pause:3.9": failed to do request: Head "https://registry.k8s.io/v2/pause/manifests/3.9": dial tcp 34.96.108.209:443: i/o timeout`, "sandbox_image_pull_failed", "sandbox.image_pull_failed"},
	{"S12 no such host (containerd)", "Failed", `Failed to pull image "registry.invalid/app:1": rpc error: code = Unknown desc = failed to pull and unpack image "registry.invalid/app:1": failed to resolve reference "registry.invalid/app:1": failed to do request: Head "https://registry.invalid/v2/app/manifests/1": dial tcp: lookup registry.invalid on 10.96.0.10:53: no such host`, "image_registry_unreachable", "image.registry_unreachable"},
	{"CRI-O registry i/o timeout", "Failed", `Failed to pull image "quay.io/org/app:v1": rpc error: code = Unknown desc = pinging container registry quay.io: Get "https://quay.io/v2/": dial tcp 54.144.203.57:443: i/o timeout`, "image_registry_unreachable", "image.registry_unreachable"},
	{"S12 wrong image (containerd)", "Failed", `Failed to pull image "nginx:1.999": rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:1.999": failed to resolve reference "docker.io/library/nginx:1.999": docker.io/library/nginx:1.999: not found`, "image_not_found", "image.not_found"},
	{"wrong tag (docker)", "Failed", `Failed to pull image "nginx:1.999": rpc error: code = Unknown desc = Error response from daemon: manifest for nginx:1.999 not found: manifest unknown: manifest unknown`, "image_not_found", "image.not_found"},
	{"wrong tag (CRI-O)", "Failed", `Failed to pull image "quay.io/org/app:v9": rpc error: code = Unknown desc = reading manifest v9 in quay.io/org/app: manifest unknown`, "image_not_found", "image.not_found"},
	{"pull access denied (containerd)", "Failed", `Failed to pull image "private/app:1.0": rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/private/app:1.0": failed to resolve reference "docker.io/private/app:1.0": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`, "image_auth_failed", "image.auth_failed"},
	{"401 (containerd)", "Failed", `Failed to pull image "registry.example.com/team/app:2.1": rpc error: code = Unknown desc = failed to pull and unpack image "registry.example.com/team/app:2.1": failed to resolve reference "registry.example.com/team/app:2.1": failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://registry.example.com/service/token?scope=repository%3Ateam%2Fapp%3Apull&service=harbor-registry: 401 Unauthorized`, "image_auth_failed", "image.auth_failed"},
	{"pull access denied (docker)", "Failed", `Failed to pull image "private/app": rpc error: code = Unknown desc = Error response from daemon: pull access denied for private/app, repository does not exist or may require 'docker login': denied: requested access to the resource is denied`, "image_auth_failed", "image.auth_failed"},
	{"unauthorized (CRI-O)", "Failed", `Failed to pull image "quay.io/org/private:v1": rpc error: code = Unknown desc = reading manifest v1 in quay.io/org/private: unauthorized: access to the requested resource is not authorized`, "image_auth_failed", "image.auth_failed"},
	{"pull secret missing", "FailedToRetrieveImagePullSecret", `Unable to retrieve some image pull secrets (regcred); attempting to pull the image may not succeed.`, "image_auth_failed", "image.pull_secret_missing"},
	{"429 (containerd)", "Failed", `Failed to pull image "nginx:1.25": rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/nginx:1.25": failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/nginx/manifests/sha256:4c0fdaa8b6341bfdeca5f18f7837462c80cff90527ee35ef185571e1c327beac: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit`, "image_pull_rate_limited", "image.rate_limited"},
	{"toomanyrequests (docker)", "Failed", `Failed to pull image "nginx": rpc error: code = Unknown desc = Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit`, "image_pull_rate_limited", "image.rate_limited"},
	{"x509 (containerd)", "Failed", `Failed to pull image "harbor.local/library/app:1.0": rpc error: code = Unknown desc = failed to pull and unpack image "harbor.local/library/app:1.0": failed to resolve reference "harbor.local/library/app:1.0": failed to do request: Head "https://harbor.local/v2/library/app/manifests/1.0": tls: failed to verify certificate: x509: certificate signed by unknown authority`, "image_registry_tls", "image.registry_tls"},
	{"x509 (docker)", "Failed", `Failed to pull image "harbor.local/library/app:1.0": rpc error: code = Unknown desc = Error response from daemon: Get "https://harbor.local/v2/": x509: certificate signed by unknown authority`, "image_registry_tls", "image.registry_tls"},
	{"S12 pull deadline", "Failed", `Failed to pull image "registry.example.com/big/model:3": rpc error: code = DeadlineExceeded desc = context deadline exceeded`, "image_pull_timeout", "image.pull_timeout"},
	{"S12 pull cancelled (docker progress deadline)", "Failed", `Failed to pull image "registry.example.com/big/model:3": rpc error: code = Canceled desc = context canceled`, "image_pull_timeout", "image.pull_timeout"},
	{"never pull", "ErrImageNeverPull", `Container image "app:dev" is not present with pull policy of Never`, "image_never_pull", "image.never_pull"},
	{"never pull summary", "Failed", `Error: ErrImageNeverPull`, "image_never_pull", "image.never_pull_summary"},
	{"invalid reference", "InspectFailed", `Failed to apply default image tag "nginx:Latest!": couldn't parse image reference "nginx:Latest!": invalid reference format`, "image_invalid_name", "image.invalid_name"},
	{"invalid name summary", "Failed", `Error: InvalidImageName`, "image_invalid_name", "image.invalid_name"},
	{"CRI-O short name", "Failed", `Failed to pull image "nginx": rpc error: code = Unknown desc = short-name "nginx" did not resolve to an alias and no unqualified-search registries are defined in "/etc/containers/registries.conf"`, "image_invalid_name", "image.invalid_name"},
	// CRI-O before containers/image's short names (pkg/storage/image.go ResolveNames, 1.10-1.17 wording).
	{"CRI-O no search registries", "InspectFailed", `Failed to inspect image "nginx:alpine": rpc error: code = Unknown desc = no registries configured while trying to pull an unqualified image, add at least one in either /etc/crio/crio.conf or /etc/containers/registries.conf`, "image_invalid_name", "image.invalid_name"},
	{"pull failed other", "Failed", `Failed to pull image "app:1": rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/app:1": failed to extract layer sha256:9f2c: failed to unpack: lchown /var/lib/containerd/tmpmounts/containerd-mount1234/etc: invalid argument: unknown`, "image_pull_failed", "image.pull_failed"},
	{"inspect error summary", "Failed", `Error: ImageInspectError`, "image_pull_failed", "image.pull_failed"},
	{"inspect failed", "InspectFailed", `Failed to inspect image "app:1": rpc error: code = Unknown desc = failed to get image info: image not known`, "image_pull_failed", "image.inspect_failed"},
	// containerd cannot start its own shim (table 1.16.0): containerd 1.0-1.7's v1 runtime execs the shim it is
	// configured with (runtime/v1/shim/client/client.go:98 at v1.7.30, "failed to start shim: %w" of
	// cmd.Start()), under the CRI plugin's "failed to create containerd task: %v"; the v2 runtimes' absolute
	// runtime_type that is not there (core/runtime/v2/shim_manager.go:392 at v2.3.4, "invalid custom binary
	// path: %w" of os.Stat, wrapped at :323 and task_manager.go:215). runc's exec of the container's own
	// command stays container_command_not_found ("create failed (containerd)" below).
	{"containerd shim not in PATH (v1 runtime)", "FailedCreatePodSandBox", `Failed create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: failed to start shim: exec: "containerd-shim": executable file not found in $PATH: unknown`, "runtime_unavailable", "sandbox.runtime_unavailable"},
	{"containerd shim path missing (v1 runtime)", "Failed", `Error: failed to create containerd task: failed to start shim: fork/exec /usr/local/bin/containerd-shim: no such file or directory: unknown`, "runtime_unavailable", "sandbox.runtime_unavailable"},
	{"containerd custom shim path missing (v2)", "Failed", `Error: failed to create containerd task: failed to start shim: failed to resolve runtime path: invalid custom binary path: stat /opt/kata/bin/containerd-shim-kata-v2: no such file or directory: unknown`, "runtime_unavailable", "sandbox.runtime_unavailable"},
	// The Docker daemon behind dockershim or cri-dockerd cannot be reached (table 1.16.0): the Docker client's
	// own words (moby client/request.go doRequest "error during connect: %v", client/errors.go
	// ErrorConnectionFailed; engine-api client/request.go "An error occurred trying to connect: %v" and
	// errors.go ErrConnectionFailed of Docker 1.12), under the kubelet's garbage collectors (kubelet.go
	// StartGarbageCollection writes err.Error()) and its image manager (images/image_manager.go "Failed to
	// inspect image %q: %v"). gRPC codes printed as numbers are grpc-go's before 1.0.
	{"dockershim: daemon gone, container GC", "ContainerGCFailed", `rpc error: code = Unknown desc = error during connect: Get http://%2Fvar%2Frun%2Fdocker.sock/v1.40/containers/json?all=1&filters=%7B%22label%22%3A%7B%22io.kubernetes.docker.type%3Dcontainer%22%3Atrue%7D%7D: EOF`, "runtime_unavailable", "sandbox.runtime_unavailable"},
	{"dockershim: daemon down, image GC (Docker 1.12)", "ImageGCFailed", `rpc error: code = 2 desc = Cannot connect to the Docker daemon. Is the docker daemon running on this host?`, "runtime_unavailable", "sandbox.runtime_unavailable"},
	{"dockershim: daemon reset, container GC (engine-api)", "ContainerGCFailed", `rpc error: code = 2 desc = An error occurred trying to connect: Get http://%2Fvar%2Frun%2Fdocker.sock/v1.24/containers/json?all=1&filters=%7B%22label%22%3A%7B%22io.kubernetes.docker.type%3Dcontainer%22%3Atrue%7D%7D: read unix @->/var/run/docker.sock: read: connection reset by peer`, "runtime_unavailable", "sandbox.runtime_unavailable"},
	{"cri-dockerd: daemon down, image inspection", "InspectFailed", `Failed to inspect image "registry.k8s.io/pause:3.9": rpc error: code = Unknown desc = Cannot connect to the Docker daemon at unix:///run/docker.sock. Is the docker daemon running?`, "runtime_unavailable", "sandbox.runtime_unavailable"},
	// The CRI socket refusing the kubelet's ImageStatus call (grpc-go's dial error as the remote image client returns it).
	{"containerd down, image inspection", "InspectFailed", `Failed to inspect image "nginx:1.27": rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: connection refused"`, "runtime_unavailable", "sandbox.runtime_unavailable"},
	// A Docker-in-Docker container's exec probe printing the same words is the probe's output, not the node's runtime.
	{"dind exec probe cannot reach its daemon", "Unhealthy", `Liveness probe failed: Cannot connect to the Docker daemon at tcp://localhost:2375. Is the docker daemon running?`, "liveness_probe_exec_failed", "probe.exec_output"},

	// ---- container (S4, S5)
	{"S5 flannel crash loop", "BackOff", `Back-off restarting failed container kube-flannel in pod kube-flannel-ds-jqgsm_kube-system(5e5d7f1e-2b1c-4e7a-9d3f-0a1b2c3d4e5f)`, "crash_loop_backoff", "container.crash_loop_backoff"},
	{"S4 ckube crash loop", "BackOff", `Back-off restarting failed container ckube in pod mspider-mcpc-ckube-remote-5447c5bcfc-25t7t_istio-system(0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0)`, "crash_loop_backoff", "container.crash_loop_backoff"},
	{"runAsNonRoot", "Failed", `Error: container has runAsNonRoot and image will run as root (pod: "web-0_default(1234)", container: app)`, "container_run_as_root", "container.run_as_root"},
	{"cannot find volume", "Failed", `Error: cannot find volume "config" to mount into container "app"`, "container_config_error", "container.config_error"},
	// The kubelet's own path errors from makeMounts (kubelet_pods.go), reported as
	// CreateContainerConfigError: a subPath's volume directory missing (GetMode's stat), the pod's
	// etc-hosts that cannot be written (ensureHostsFile).
	{"subPath volume dir missing", "Failed", `Error: stat /var/lib/kubelet/pods/5f1c2a3b-4d5e-11e9-8f1a-0a1b2c3d4e5f/volumes/kubernetes.io~csi/pvc-0a5c3d8e-3a4e-4c1f-9d2e-6f2b0e4a7c11/mount: no such file or directory`, "container_config_error", "container.config_error"},
	{"etc-hosts not writable", "Failed", `Error: open /var/lib/kubelet/pods/5f1c2a3b-4d5e-11e9-8f1a-0a1b2c3d4e5f/etc-hosts: no such file or directory`, "container_config_error", "container.config_error"},
	{"start failed (docker)", "Failed", `Error: failed to start container "app": Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container process caused: exec: "/docker-entrypoint.sh": permission denied: unknown`, "container_create_failed", "container.create_failed"},
	{"create failed (containerd)", "Failed", `Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "python": executable file not found in $PATH: unknown`, "container_command_not_found", "container.command_not_found"},
	{"create timeout", "Failed", `Error: context deadline exceeded`, "runtime_timeout", "sandbox.runtime_timeout"},
	// A hostPath mount's missing source the runtime cannot create on a read-only part of the node (table
	// 1.16.0): containerd's CRI WithMounts (internal/cri/opts/spec_linux_opts.go:142 at v2.3.4, "failed to
	// mkdir %q: %w", under container_create.go:594's "failed to generate spec: %w" and the CRI's "failed
	// to generate container %q spec: %w"), CRI-O's addOCIBindMounts ("failed to mkdir %s: %s"), Docker's
	// "error while creating mount source path '%s': %v" under dockershim's "failed to start container %q:
	// %v". A full disk there is disk_full.
	{"hostPath source on a read-only root (containerd)", "Failed", `Error: failed to generate container "5ab13342e5d3c0f1a7b9e2d4c6f8a0b1c3d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1" spec: failed to generate spec: failed to mkdir "/opt/cni/bin": mkdir /opt/cni: read-only file system`, "container_config_error", "container.mount_source_read_only"},
	{"hostPath source on a read-only root (CRI-O)", "Failed", `Error: failed to mkdir /usr/libexec/kubernetes/kubelet-plugins/volume/exec: mkdir /usr/libexec/kubernetes: read-only file system`, "container_config_error", "container.mount_source_read_only"},
	{"hostPath source on a read-only root (dockershim)", "Failed", `Error: failed to start container "node-exporter": Error response from daemon: error while creating mount source path '/root/.local/share/metrics': mkdir /root/.local: read-only file system`, "container_config_error", "container.mount_source_read_only"},
	{"hostPath source on a full disk (containerd)", "Failed", `Error: failed to generate container "5ab13342e5d3c0f1a7b9e2d4c6f8a0b1c3d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1" spec: failed to generate spec: failed to mkdir "/var/lib/app/cache": mkdir /var/lib/app: no space left on device`, "disk_full", "sandbox.disk_full"},
	// The GCS FUSE CSI driver v1.24.4 (pkg/csi_driver/utils.go:629) on its sidecar's OOM kill.
	{"gcsfuse sidecar OOM killed", "FailedMount", `MountVolume.SetUp failed for volume "gcs-fuse-csi-pv" : rpc error: code = ResourceExhausted desc = the "gke-gcsfuse-sidecar" container terminated due to OOMKilled, exit code: 137`, "oom_killed", "volume.fuse_sidecar_oom_killed"},
	// Windows: containerd's task start wrapping hcsshim's HCS error (hcs::System::CreateProcess with
	// the Win32 ERROR_FILE_NOT_FOUND and ERROR_DIRECTORY texts).
	{"Windows HNS endpoint (dockershim)", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to start sandbox container for pod "iis-5d8f7c9b6-x2k4p": Error response from daemon: failed to create endpoint k8s_POD_iis-5d8f7c9b6-x2k4p_default_0b6a7f9e-1c2d-4e3f-8a9b-0c1d2e3f4a5b_0 on network nat: HNS failed with error : Unspecified error`, "cni_error", "sandbox.windows_network"},
	{"Windows command not in the image", "Failed", `Error: failed to start containerd task "9f1c2e4a6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a": hcs::System::CreateProcess 9f1c2e4a6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a: The system cannot find the file specified.: unknown`, "container_command_not_found", "container.windows_command_not_found"},
	{"Windows working directory invalid", "Failed", `Error: failed to start containerd task "9f1c2e4a6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a": hcs::System::CreateProcess 9f1c2e4a6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a: The directory name is invalid.: unknown`, "container_config_error", "container.windows_config_error"},
	// The same WithMounts stat (spec_linux_opts.go:139 at v2.3.4, "failed to stat %q: %w") on the
	// kubelet's NFS mount point when the server's export went away: ESTALE, Go's "stale file handle".
	{"stale NFS mount at container create (containerd)", "Failed", `Error: failed to generate container "5ab13342e5d3c0f1a7b9e2d4c6f8a0b1c3d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1" spec: failed to generate spec: failed to stat "/var/lib/kubelet/pods/0b6a7f9e-1c2d-4e3f-8a9b-0c1d2e3f4a5b/volumes/kubernetes.io~nfs/data": stat /var/lib/kubelet/pods/0b6a7f9e-1c2d-4e3f-8a9b-0c1d2e3f4a5b/volumes/kubernetes.io~nfs/data: stale file handle`, "nfs_mount_failed", "volume.nfs_stale_handle"},
	{"exec format error", "Failed", `Error: failed to start container "app": Error response from daemon: OCI runtime create failed: container_linux.go:367: starting container process caused: exec format error: unknown`, "image_wrong_architecture", "container.exec_format_error"},
	// crun's wording of the same ENOEXEC (libcrun: "exec container process `%s`") under CRI-O's
	// "container create failed: " and the kubelet's "Error: ".
	{"exec format error (crun)", "Failed", `Error: container create failed: exec container process ` + "`/app/server`" + `: Exec format error`, "image_wrong_architecture", "container.exec_format_error"},
	// A flexvolume driver's modprobe of a module built for another kernel: kmod's "could not insert
	// '%s': %s" with strerror(ENOEXEC), in the kubelet's "%s command failed, status: %s, reason: %s"
	// (pkg/volume/flexvolume/driver-call.go). The node's kernel modules, not the image: the generic
	// mount failure.
	{"flexvolume modprobe exec format error", "FailedMount", `MountVolume.SetUp failed for volume "data" : mount command failed, status: Failure, reason: modprobe: ERROR: could not insert 'nbd': Exec format error`, "volume_mount_failed", "volume.mount_failed"},
	{"S5 no arm64 manifest (docker)", "Failed", `Failed to pull image "registry.example.com/app:1.0": rpc error: code = Unknown desc = Error response from daemon: no matching manifest for linux/arm64/v8 in the manifest list entries`, "image_wrong_architecture", "container.wrong_architecture"},
	{"postStart hook", "FailedPostStartHook", `Exec lifecycle hook ([/bin/sh -c /init.sh]) for Container "app" in Pod "web-0_default(1234)" failed - error: command '/bin/sh -c /init.sh' exited with 1: , message: ""`, "hook_failed", "container.hook_failed"},
	{"preStop hook", "FailedPreStopHook", `HTTP lifecycle hook (/shutdown) for Container "app" in Pod "web-0_default(1234)" failed - error: Get "http://10.0.0.5:8080/shutdown": dial tcp 10.0.0.5:8080: connect: connection refused, message: ""`, "hook_failed", "container.hook_failed"},
	// The kubelet kills a container whose postStart hook failed (kuberuntime_container.go
	// startContainer → killContainer(…, "FailedPostStartHook", …)): 1.13+ and 1.9-1.12 Killing messages.
	{"killed after postStart", "Killing", `FailedPostStartHook`, "hook_failed", "container.post_start_failed"},
	{"killed after postStart (1.9)", "Killing", `Killing container with id docker://8e3f1a2b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7:FailedPostStartHook`, "hook_failed", "container.post_start_failed"},
	// The pre-CRI kubelet's FailedSync of the same (kubernetes/website
	// content/en/docs/concepts/containers/container-lifecycle-hooks.md; its Killing line is a tuning line).
	{"postStart handler (1.5)", "FailedSync", `Error syncing pod, skipping: failed to "StartContainer" for "main" with RunContainerError: "PostStart handler: Error executing in Docker Container: 1"`, "hook_failed", "container.post_start_failed"},
	{"system OOM", "SystemOOM", `System OOM encountered, victim process: java, pid: 12345`, "node_system_oom", "node.system_oom"},
	{"kernel OOM kill", "OOMKilling", `Memory cgroup out of memory: Killed process 12345 (java) total-vm:8123456kB, anon-rss:2097152kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:5000kB oom_score_adj:999`, "oom_killed", "container.oom_killed"},

	// ---- probes (S6)
	{"S6 readiness connection refused", "Unhealthy", `Readiness probe failed: Get "http://10.244.0.17:15021/healthz/ready": dial tcp 10.244.0.17:15021: connect: connection refused`, "istio_sidecar_not_ready", "probe.istio_sidecar"},
	{"liveness tcp refused", "Unhealthy", `Liveness probe failed: dial tcp 10.244.1.7:6379: connect: connection refused`, "liveness_probe_connection_refused", "probe.connection_refused"},
	{"startup refused", "Unhealthy", `Startup probe failed: Get "http://10.244.2.9:8080/actuator/health": dial tcp 10.244.2.9:8080: connect: connection refused`, "startup_probe_connection_refused", "probe.connection_refused"},
	{"liveness http timeout", "Unhealthy", `Liveness probe failed: Get "http://10.244.1.5:8080/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, "liveness_probe_timeout", "probe.timeout"},
	{"readiness exec timeout", "Unhealthy", `Readiness probe errored and resulted in unknown state: command timed out: "python -c import sys; sys.exit(0)" timed out after 5s`, "readiness_probe_timeout", "probe.timeout"},
	{"startup tcp timeout", "Unhealthy", `Startup probe failed: dial tcp 10.244.2.9:5432: i/o timeout`, "startup_probe_timeout", "probe.timeout"},
	{"liveness 500", "Unhealthy", `Liveness probe failed: HTTP probe failed with statuscode: 500`, "liveness_probe_http_status", "probe.http_status"},
	{"readiness 503", "Unhealthy", `Readiness probe failed: HTTP probe failed with statuscode: 503`, "readiness_probe_http_status", "probe.http_status"},
	{"startup 404", "Unhealthy", `Startup probe failed: HTTP probe failed with statuscode: 404`, "startup_probe_http_status", "probe.http_status"},
	{"liveness exec output", "Unhealthy", `Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory`, "liveness_probe_exec_failed", "probe.exec_output"},
	{"readiness exec errored", "Unhealthy", `Readiness probe errored: rpc error: code = Unknown desc = failed to exec in container: failed to start exec "3b1f": OCI runtime exec failed: exec failed: unable to start container process: exec: "curl": executable file not found in $PATH: unknown`, "readiness_probe_exec_failed", "probe.exec_error"},
	{"startup exec output", "Unhealthy", `Startup probe failed: /var/run/postgresql:5432 - no response`, "startup_probe_exec_failed", "probe.exec_output"},
	{"readiness exec empty output", "Unhealthy", `Readiness probe failed: `, "readiness_probe_failed", "probe.empty_output"},
	{"liveness tls error", "Unhealthy", `Liveness probe failed: Get "https://10.244.1.5:8443/healthz": remote error: tls: handshake failure`, "liveness_probe_failed", "probe.network_error"},
	{"readiness EOF", "Unhealthy", `Readiness probe failed: Get "http://10.244.0.9:8080/ready": EOF`, "readiness_probe_failed", "probe.network_error"},
	{"liveness grpc not serving", "Unhealthy", `Liveness probe failed: service unhealthy (responded with "NOT_SERVING")`, "liveness_probe_failed", "probe.network_error"},
	{"startup named port", "Unhealthy", `Startup probe errored and resulted in unknown state: strconv.Atoi: parsing "http": invalid syntax`, "startup_probe_failed", "probe.errored"},
	// Kubelets before 1.3 (pkg/probe/http/http.go DoHTTPProbe) gave a failing HTTP probe's response body
	// as its output: here nginx's own 503 page (ngx_http_special_response.c).
	{"readiness html body", "Unhealthy", "Readiness probe failed: <html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n", "readiness_probe_http_status", "probe.http_body"},
	// OpenShift's kubelet (openshift/kubernetes pkg/kubelet/prober/patch_prober.go): ProbeError,
	// "%s probe error: %s\nbody: %s\n" around the HTTP prober's output and the response body.
	{"ProbeError refused", "ProbeError", "Liveness probe error: Get \"https://10.131.0.22:8443/healthz\": dial tcp 10.131.0.22:8443: connect: connection refused\nbody: \n", "liveness_probe_connection_refused", "probe.error_connection_refused"},
	{"ProbeError timeout", "ProbeError", "Readiness probe error: Get \"https://10.129.2.7:8443/readyz\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)\nbody: \n", "readiness_probe_timeout", "probe.error_timeout"},
	{"ProbeError status", "ProbeError", "Readiness probe error: HTTP probe failed with statuscode: 500\nbody: [+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\nhealthz check failed\n", "readiness_probe_http_status", "probe.error_http_status"},
	{"ProbeError tls", "ProbeError", "Startup probe error: Get \"https://10.0.0.5:10257/healthz\": remote error: tls: bad certificate\nbody: \n", "startup_probe_failed", "probe.error_other"},

	// ---- eviction (S18)
	{"S18 low on ephemeral-storage", "Evicted", `The node was low on resource: ephemeral-storage. Threshold quantity: 1%, available: 0. Container app was using 5Gi, request is 0, has larger consumption of ephemeral-storage. `, "evicted_disk", "eviction.disk"},
	{"S18 DiskPressure admission", "Evicted", `Pod The node had condition: [DiskPressure]. `, "evicted_disk", "eviction.disk"},
	{"S18 reclaim nodefs", "EvictionThresholdMet", `Attempting to reclaim ephemeral-storage`, "node_disk_pressure", "node.eviction_threshold_disk"},
	{"low on memory", "Evicted", `The node was low on resource: memory. Threshold quantity: 100Mi, available: 67420Ki. Container java was using 1532112Ki, request is 512Mi, has larger consumption of memory. `, "evicted_memory", "eviction.memory"},
	{"MemoryPressure admission", "Evicted", `Pod The node had condition: [MemoryPressure]. `, "evicted_memory", "eviction.memory"},
	// Kubelets of 1.5-1.8 (eviction_manager.go Admit): "The node was low on resource: %v." with the
	// node's conditions as a list.
	{"MemoryPressure admission (1.5-1.8)", "Evicted", `The node was low on resource: [MemoryPressure].`, "evicted_memory", "eviction.memory"},
	{"Memory and DiskPressure admission (1.5-1.8)", "Evicted", `The node was low on resource: [MemoryPressure DiskPressure].`, "evicted_disk", "eviction.disk"},
	{"pod ephemeral limit", "Evicted", `Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. `, "evicted_ephemeral_storage_limit", "eviction.ephemeral_storage_limit"},
	{"container ephemeral limit", "Evicted", `Container app exceeded its local ephemeral storage limit "500Mi". `, "evicted_ephemeral_storage_limit", "eviction.ephemeral_storage_limit"},
	{"emptyDir limit", "Evicted", `Usage of EmptyDir volume "cache" exceeds the limit "1Gi". `, "evicted_ephemeral_storage_limit", "eviction.ephemeral_storage_limit"},
	{"low on pids", "Evicted", `The node was low on resource: pids. Threshold quantity: 10%, available: 3%. `, "evicted_pids", "eviction.pids"},
	{"preempted", "Preempted", `Preempted by pod 4f1c2a3b-5d6e-7f80-9a1b-2c3d4e5f6a7b on node worker-2`, "evicted_other", "eviction.other"},
	{"kubelet preempts for a critical pod", "Preempting", `Preempted in order to admit critical pod`, "evicted_other", "eviction.other"},
	{"pod cgroup without pids (S17 kernel)", "FailedCreatePodContainer", `unable to ensure pod container exists: failed to create container for [kubepods burstable pod0f1e2d3c] : Failed to find subsystem mount for required subsystem: pids`, "sandbox_failed", "sandbox.other"},
	// The taint eviction controller's message (pkg/controller/tainteviction/taint_eviction.go, the node
	// lifecycle controller's taint manager before 1.29) is the same for every NoExecute taint, not-ready,
	// unreachable or an operator's own: it cannot tell node_not_ready.
	{"taint manager", "TaintManagerEviction", `Marking for deletion Pod default/web-0`, "evicted_other", "eviction.other"},
	// KubeVirt's node controller marks a node whose virt-handler stopped heart-beating (kubevirt
	// pkg/virt-controller/watch/node/node.go markNodeAsUnresponsive, watch/node.go before): the agent pod
	// alone can be down on a Ready node, so the text cannot tell node_not_ready (left unknown).
	{"KubeVirt virt-handler unresponsive", "NodeUnresponsive", `virt-handler is not responsive, marking node as unresponsive`, "unknown", ""},
	// Written on the e2e real node (kubelet 1.35.4, containerd 1.6.20, runc 1.1.5).
	{"runc state root full (S10, runc#3659)", "FailedCreatePodSandBox", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: unable to store init state: %!w(<nil>): unknown`, "disk_full", "sandbox.disk_full"},
	{"runtime slow to kill", "ExceededGracePeriod", `Container runtime did not kill the pod within specified grace period.`, "runtime_timeout", "sandbox.kill_exceeded_grace_period"},

	// ---- node
	// kubelet 1.31-1.34 (kubernetes/kubernetes pkg/kubelet/cm/container_manager.go,
	// CgroupV1MaintenanceModeWarning); 1.35's wording is in testdata/real-node.yaml.
	{"cgroup v1 in maintenance mode", "CgroupV1", `cgroup v1 support is in maintenance mode, please migrate to cgroup v2`, "cgroup_v1_deprecated", "node.cgroup_v1"},

	// ---- scheduling (S2)
	{"insufficient cpu", "FailedScheduling", `0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.`, "scheduling_insufficient_resources", "scheduling.insufficient_resources"},
	{"insufficient memory beside a control-plane taint", "FailedScheduling", `0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient memory. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.`, "scheduling_insufficient_resources", "scheduling.insufficient_resources"},
	// Karpenter 1.5+: its provisioning decision, the error as it is (kubernetes-sigs/karpenter v1.14.1
	// pkg/controllers/provisioning/scheduling events.go PodFailedToScheduleEvent over scheduler.go:718).
	{"karpenter nodepool limits", "FailedScheduling", `Failed to schedule pod, all available instance types exceed limits for nodepool`, "unknown", "guard.karpenter_provisioning"},
	{"selector mismatch", "FailedScheduling", `0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.`, "scheduling_node_selector_mismatch", "scheduling.node_selector_mismatch"},
	{"selector mismatch (old wording)", "FailedScheduling", `0/3 nodes are available: 3 node(s) didn't match node selector.`, "scheduling_node_selector_mismatch", "scheduling.node_selector_mismatch"},
	{"untolerated taint and cordon", "FailedScheduling", `0/5 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}, 3 node(s) were unschedulable. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.`, "scheduling_taint_not_tolerated", "scheduling.taint"},
	{"taint (old wording)", "FailedScheduling", `0/3 nodes are available: 3 node(s) had taint {node.kubernetes.io/not-ready: }, that the pod didn't tolerate.`, "scheduling_taint_not_tolerated", "scheduling.taint"},
	{"S2 unbound PVC", "FailedScheduling", `0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.`, "scheduling_pvc_unbound", "scheduling.pvc_unbound"},
	{"no PV to bind", "FailedScheduling", `0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.`, "scheduling_pvc_unbound", "scheduling.pvc_unbound"},
	// Schedulers of 1.4-1.12 (volume predicates' "PersistentVolumeClaim is not bound: %q", wrapped in
	// generic_scheduler's "SchedulerPredicates failed due to %v, which is unexpected."); VolumeBinding's
	// PreBind when the provisioner removed the selected node (binder.go checkBindings).
	{"claim not bound (1.7)", "FailedScheduling", `SchedulerPredicates failed due to PersistentVolumeClaim is not bound: "data-web-0", which is unexpected.`, "scheduling_pvc_unbound", "scheduling.pvc_unbound"},
	{"provisioning failed at PreBind", "FailedScheduling", `running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "data-web-0"`, "scheduling_pvc_unbound", "scheduling.pvc_unbound"},
	{"volume node affinity", "FailedScheduling", `0/1 nodes are available: 1 node(s) had volume node affinity conflict. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.`, "scheduling_volume_node_affinity", "scheduling.volume_node_affinity"},
	{"no nodes", "FailedScheduling", `no nodes available to schedule pods`, "scheduling_no_nodes", "scheduling.no_nodes"},
	// NVIDIA KAI-Scheduler v0.13.0 (pkg/scheduler/api/common_info/pod_errors.go, job_errors.go,
	// the status updater's Unschedulable and FailedBinding) and Volcano v1.15.1 (the podgroup's
	// Unschedulable, plugins proportion and resourcequota): the batch schedulers' wordings.
	{"KAI GPUs beside a taint", "Unschedulable", "no nodes with enough resources were found: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. \n3 node(s) didn't have enough resources: GPUs.", "scheduling_insufficient_resources", "scheduling.insufficient_resources"},
	{"KAI taint only", "Unschedulable", "no nodes with enough resources were found: 4 node(s) had untolerated taint {nvidia.com/gpu: present}.", "scheduling_taint_not_tolerated", "scheduling.taint"},
	{"KAI missing configmap", "Unschedulable", "Scheduling conditions were not met for pod ml-team/train-llm-0:\nConfigMap: Missing required configmaps: [train-llm-config].\n", "configmap_not_found", "scheduling.missing_configmap"},
	{"KAI queue limit", "Unschedulable", `OverLimit: team-a quota has reached the allowable limit of GPUs. Limit is 8 GPUs, currently 8 GPUs allocated and workload requested 2 GPUs.`, "scheduling_failed", "scheduling.queue_quota"},
	{"KAI binding", "FailedBinding", `Failed to bind pod ml-team/train-llm-0 to node dgx-a100-01. Post "https://10.96.0.1:443/apis/scheduling.run.ai/v1alpha2/namespaces/ml-team/bindrequests": context deadline exceeded`, "scheduling_failed", "scheduling.binding"},
	{"Volcano namespace quota", "Unschedulable", `resource quota insufficient, requested: map[requests.nvidia.com/gpu:{{4 0} {<nil>} 4 DecimalSI}], used: map[requests.nvidia.com/gpu:{{6 0} {<nil>} 6 DecimalSI}], limited: map[requests.nvidia.com/gpu:{{8 0} {<nil>} 8 DecimalSI}]`, "quota_exceeded", "scheduling.namespace_quota"},
	// Terway's node daemon on the pod (AliyunContainerService/terway cni_linux.go AllocIPFailed,
	// pkg/eni/manager.go "no eni can handle the allocation").
	{"Terway IP allocation", "AllocIPFailed", `cmdAdd: error alloc ip rpc error: code = Unknown desc = no eni can handle the allocation`, "cni_error", "sandbox.terway_pod_network"},
	// HAMi v2.10.0's scheduler extender (pkg/scheduler/score.go:351, one FilteringFailed per reason).
	{"HAMi card memory", "FilteringFailed", `2 nodes CardInsufficientMemory(gpu-node-1,gpu-node-2)`, "scheduling_insufficient_resources", "scheduling.insufficient_resources"},
	{"HAMi card type", "FilteringFailed", `1 nodes CardTypeMismatch(a100-node-1)`, "scheduling_node_selector_mismatch", "scheduling.device_type_mismatch"},
	{"HAMi namespace quota", "FilteringFailed", `2 nodes ResourceQuotaNotFit(gpu-node-1,gpu-node-2)`, "quota_exceeded", "scheduling.device_quota"},
	{"Volcano gang origin", "PodGroupPending", `PodGroup default:mnist-job unschedulable, reason: 2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable; Pending: 2 Unschedulable. Origin reason is mnist-job-worker-0: 0/3 nodes are unavailable: 3 Insufficient nvidia.com/gpu.`, "scheduling_insufficient_resources", "scheduling.insufficient_resources"},
	{"host port", "FailedScheduling", `0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.`, "scheduling_port_conflict", "scheduling.port_conflict"},
	{"anti-affinity", "FailedScheduling", `0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.`, "scheduling_failed", "scheduling.pod_affinity_or_spread"},

	// ---- workload: the controllers' Events (the ReplicaSet, StatefulSet, DaemonSet, Job or
	// CronJob, not a pod). Real messages are in the tuning corpus; these are the wordings of the
	// Kubernetes source that the corpus has no thread for, each with its file.
	// apiserver pkg/admission/plugin/webhook/errors/statuserror.go, a webhook that gave no reason.
	// Kubeflow training-operator's pod control (pkg/controller.v1/control/pod_control.go): FailedCreatePod,
	// "Error creating: %v" with the API error.
	{"training job pod denied by a webhook", "FailedCreatePod", `Error creating: pods "train-worker-0" is forbidden: admission webhook "policy.example.com" denied the request without explanation`, "admission_webhook_denied", "workload.admission_webhook_denied"},
	{"training job pod over quota", "FailedCreatePod", `Error creating: pods "train-worker-3" is forbidden: exceeded quota: gpu, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8`, "quota_exceeded", "workload.quota_exceeded"},
	{"webhook denied without explanation", "FailedCreate", `Error creating: pods "web-5d8f9c7b6-" is forbidden: admission webhook "policy.example.com" denied the request without explanation`, "admission_webhook_denied", "workload.admission_webhook_denied"},
	// apiserver pkg/admission/plugin/policy/validating/dispatcher.go.
	{"validating admission policy denied", "FailedCreate", `Error creating: pods "web-5d8f9c7b6-x2m4k" is forbidden: ValidatingAdmissionPolicy 'no-privileged' with binding 'no-privileged-binding' denied request: Privileged containers are not allowed`, "admission_webhook_denied", "workload.admission_webhook_denied"},
	// apiserver 1.23+: "failed calling webhook %q: failed to call webhook: %w" (rancher/webhook#365 has the API error).
	{"webhook without endpoints", "FailedCreate", `Error creating: Internal error occurred: failed calling webhook "rancher.cattle.io.pods": failed to call webhook: Post "https://rancher-webhook.cattle-system.svc:443/v1/webhook/mutation/pods?timeout=10s": no endpoints available for service "rancher-webhook"`, "admission_webhook_unavailable", "workload.admission_webhook_unavailable"},
	// pkg/controller/cronjob/cronjob_controllerv2.go "Error creating job: %v" with the quota admission's error.
	{"cronjob job over quota", "FailedCreate", `Error creating job: jobs.batch "nightly-report-28901234" is forbidden: exceeded quota: object-counts, requested: count/jobs.batch=1, used: count/jobs.batch=10, limited: count/jobs.batch=10`, "quota_exceeded", "workload.quota_exceeded"},
	// The Deployment controller (pkg/controller/deployment/sync.go, ReplicaSetCreateError) and OpenShift's
	// deployer controller giving up on a DeploymentConfig's deployer pod (FailedRetry) quote the API error.
	{"replica set over quota", "ReplicaSetCreateError", `Failed to create new replica set "web-7d4b9c8f6d": replicasets.apps "web-7d4b9c8f6d" is forbidden: exceeded quota: object-counts, requested: count/replicasets.apps=1, used: count/replicasets.apps=50, limited: count/replicasets.apps=50`, "quota_exceeded", "workload.quota_exceeded"},
	{"deployer pod over quota", "FailedRetry", `Stop retrying: couldn't create deployer pod for "shop/web-3": pods "web-3-deploy" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=10, limited: pods=10`, "quota_exceeded", "workload.quota_exceeded"},
	{"deployer pod without requests", "FailedRetry", `Stop retrying: couldn't create deployer pod for "shop/web-3": pods "web-3-deploy" is forbidden: failed quota: compute: must specify cpu,memory`, "quota_validation_failed", "workload.quota_validation_failed"},
	// pkg/controller/statefulset/stateful_pod_control.go, the claim of a volumeClaimTemplate over a storage quota.
	{"statefulset claim over quota", "FailedCreate", `create Claim data-db-0 for Pod db-0 in StatefulSet db failed error: persistentvolumeclaims "data-db-0" is forbidden: exceeded quota: storage, requested: requests.storage=10Gi, used: requests.storage=95Gi, limited: requests.storage=100Gi`, "quota_exceeded", "workload.quota_exceeded"},
	// staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go.
	{"quota evaluation timed out", "FailedCreate", `Error creating: Internal error occurred: resource quota evaluation timed out`, "workload_create_timeout", "workload.create_timeout"},
	// A webhook whose own message quotes a pod cause's words: still the webhook, not the secret.
	{"webhook denial quoting a missing secret", "FailedCreate", `Error creating: admission webhook "vault.hashicorp.com" denied the request: secrets "vault-token" not found`, "admission_webhook_denied", "workload.admission_webhook_denied"},
	// pkg/controller/job/job_controller.go: the per-index backoff limit (backoffLimitPerIndex).
	{"job max failed indexes", "MaxFailedIndexesExceeded", `Job has exceeded the specified maximal number of failed indexes`, "job_backoff_limit_exceeded", "workload.job_backoff_limit_exceeded"},
	{"job failed indexes", "FailedIndexes", `Job has failed indexes`, "job_backoff_limit_exceeded", "workload.job_backoff_limit_exceeded"},
	// pkg/kubelet/active_deadline.go: a pod's own activeDeadlineSeconds is not the Job's deadline.
	{"pod active deadline is not the job's", "DeadlineExceeded", `Pod was active on the node longer than the specified deadline`, "unknown", ""},

	// ---- nothing to classify
	{"S1 scheduled", "Scheduled", `Successfully assigned istio-system/mspider-mcpc-ckube-remote-5447c5bcfc-25t7t to yl-cluster1`, "unknown", ""},
	{"S5 image present", "Pulled", `Container image "k8s.gcr.io/etcd:3.5.0-0" already present on machine`, "unknown", ""},
	{"probe warning", "ProbeWarning", `Readiness probe warning: Probe terminated redirects`, "unknown", ""},
	{"empty", "", "", "unknown", ""},
}

func TestGolden(t *testing.T) {
	tab := Default()
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			got := tab.Classify(g.reason, g.message)
			if got.Cause != g.cause || got.Rule != g.rule {
				t.Errorf("Classify(%q, %q)\n got cause %q by rule %q\nwant cause %q by rule %q", g.reason, g.message, got.Cause, got.Rule, g.cause, g.rule)
			}
			// The aggregator's prefix must not change the answer.
			if agg := tab.Classify(g.reason, CombinedPrefix+g.message); agg != got {
				t.Errorf("with the aggregation prefix: got %+v, without: %+v", agg, got)
			}
		})
	}
}

// Every cause of the built-in table must be produced by at least one golden message or tuning
// corpus line.
func TestEveryCauseReachable(t *testing.T) {
	tab := Default()
	hit := map[string]bool{}
	for _, g := range goldens {
		hit[tab.Classify(g.reason, g.message).Cause] = true
	}
	for _, l := range tuningLines(t) {
		hit[tab.Classify(l.Reason, l.Message).Cause] = true
	}
	for _, c := range tab.Causes() {
		if !hit[c.Name] {
			t.Errorf("cause %q is not produced by any golden message or tuning corpus line", c.Name)
		}
	}
}

// Every rule must classify at least one golden message or tuning corpus line, with a cause it
// declares.
func TestEveryRuleHit(t *testing.T) {
	tab := Default()
	hit := map[string]bool{}
	check := func(reason, message string) {
		r := tab.Classify(reason, message)
		if r.Rule != "" && !slices.Contains(tab.RuleCauses(r.Rule), r.Cause) {
			t.Errorf("rule %q produced %q, not among its causes %v", r.Rule, r.Cause, tab.RuleCauses(r.Rule))
		}
		hit[r.Rule] = true
	}
	for _, g := range goldens {
		check(g.reason, g.message)
	}
	// The tuning corpus counts too (the held-back set must not shape the table).
	for _, l := range tuningLines(t) {
		check(l.Reason, l.Message)
	}
	for _, r := range tab.Rules() {
		if !hit[r.ID] {
			t.Errorf("rule %q is not hit by any golden message or tuning corpus line", r.ID)
		}
	}
}

func BenchmarkClassify(b *testing.B) {
	tab := Default()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g := &goldens[i%len(goldens)]
		tab.Classify(g.reason, g.message)
	}
}

func BenchmarkParseDefault(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(defaultYAML); err != nil {
			b.Fatal(err)
		}
	}
}

// tuningLines are the reasons and messages of the tuning corpus (package corpus reads and scores
// the whole lines; it imports this package, so its loader cannot be used here).
func tuningLines(t *testing.T) []struct{ Reason, Message string } {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus/tuning.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var lines []struct{ Reason, Message string }
	if err := yaml.Unmarshal(b, &lines); err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatal("testdata/corpus/tuning.yaml is empty")
	}
	return lines
}

// nfsCSIMountTimeout is the NFS CSI driver's mount timeout as the kubelet reports it
// (kubernetes-csi/csi-driver-nfs v4.13.4 pkg/nfs/nodeserver.go:158, under operation_generator.go's
// "MountVolume.SetUp failed for volume %q : %v").
const nfsCSIMountTimeout = `MountVolume.SetUp failed for volume "pvc-0c7e3bd2-5b9e-4f0e-9a43-2c1f6f1c7d11" : rpc error: code = Internal desc = mount volume 10.20.30.40:/exports/pvc-0c7e3bd2-5b9e-4f0e-9a43-2c1f6f1c7d11 to /var/lib/kubelet/pods/42b8a77a-b9f9-4429-b77b-a2f8e7d6f6f9/volumes/kubernetes.io~csi/pvc-0c7e3bd2-5b9e-4f0e-9a43-2c1f6f1c7d11/mount timeout after 120s`

// The NFS server of the drivers' timeouts is the incident's target, as for mount.nfs's own errors.
func TestTargetNFSCSIMountTimeout(t *testing.T) {
	r := Default().Classify("FailedMount", nfsCSIMountTimeout)
	if r.Cause != "nfs_mount_failed" || r.Target != "10.20.30.40" {
		t.Errorf("Classify = cause %q target %q, want nfs_mount_failed 10.20.30.40", r.Cause, r.Target)
	}
	found := false
	for _, g := range goldens {
		if g.name != "azure files nfs mount timeout" {
			continue
		}
		found = true
		if r := Default().Classify(g.reason, g.message); r.Target != "f5713de20cde511e8ba4900.file.core.windows.net" {
			t.Errorf("%s: target %q, want the share's server", g.name, r.Target)
		}
	}
	if !found {
		t.Error("no golden named \"azure files nfs mount timeout\"")
	}
}
