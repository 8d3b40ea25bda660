// Generated from mixin.libsonnet by hack/generate/mixin.sh. DO NOT EDIT.
check "rule/dependency" {
  ignoreGroupMismatch = [
    "cluster:kubecause_state_source_missing:info",
    "cluster_cause:kubecause_cause_info:latest",
    "namespace_replicaset:kubecause_replicaset_owner:info",
    "namespace_job:kubecause_job_owner:info",
    "namespace_pod:kubecause_pod_workload:info",
    "namespace_pod_cause:kubecause_pod_failing:max",
    "namespace_persistentvolumeclaim_cause:kubecause_pvc_provisioning_failing:max",
    "namespace_persistentvolumeclaim:kubecause_pvc_pending_unexplained:max",
    "namespace_persistentvolumeclaim:kubecause_pvc_deletion_timestamp:max",
    "namespace_workload_cause:kubecause_workload_failing:max",
    "namespace_workload:kubecause_cronjob_last_success:max",
    "namespace_workload_cause:kubecause_cronjob_causes_kept:max",
    "namespace_workload_cause:kubecause_cronjob_failing:min",
    "namespace_pod_container_reason:kubecause_container_waiting_unexplained:max",
    "namespace_service:kubecause_load_balancer_no_address:max",
    "cluster_node:kubecause_node_not_ready:max",
    "cluster_node_condition:kubecause_node_pressure:max",
  ]
}

