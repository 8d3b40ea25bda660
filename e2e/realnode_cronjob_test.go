//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubecause/kubecause/e2e/framework"
	"github.com/kubecause/kubecause/e2e/scenarios"
)

// Work that recurs: a CronJob whose every run fails the same way. Its runs' pods mount a Secret
// that does not exist, so each run's pod waits on the kubelet's FailedMount (`MountVolume.SetUp
// failed for volume "credentials" : secret "report-credentials" not found`) until its Job's
// deadline fails the run (the Job controller's DeadlineExceeded, `Job was active longer than
// specified deadline`).
const (
	cronJobNS     = "real-cronjob"
	cronJobName   = "nightly-report"
	cronJobSecret = "report-credentials"
	// cronJobFailing is how long the runs fail, from the first run on: the 15 minutes.
	cronJobFailing = 15 * time.Minute
	// cronJobMinFailedRuns is how many failed runs the cronjob controller must have made by
	// then, of the 15 its schedule asks for (a run it starts late under load is not the test's
	// concern).
	cronJobMinFailedRuns = 12
	// cronJobDeadline is the Job's activeDeadlineSeconds: shorter than the schedule's minute, so
	// that a run has ended when the next one is due.
	cronJobDeadline = 40
)

// TestRealNodeCronJob is the incident class of work that recurs on a real node (the real cronjob
// and Job controllers, kubelet and runtime): a CronJob scheduled every minute whose runs all fail
// for 15 minutes pages once, KubecauseCronJobFailing naming the CronJob and its pods' cause, and
// nothing else names its namespace: not each run's pod alert, nor each Job's own failure. Then
// the Secret is created, the next run succeeds and the alert resolves: one resolved
// notification, and no new firing one while later runs succeed.
func TestRealNodeCronJob(t *testing.T) {
	ctx := testContext(t)
	const ns = cronJobNS
	// KubecauseCronJobFailing's 10m scaled like the per-pod start alerts' (10m there, podStartFor
	// here); those stay short, so that rules which page per run page here within each run.
	s := startRealNodeStackWith(t, []string{ns}, realNodeOptions{alertFor: map[string]time.Duration{"KubecauseCronJobFailing": podStartFor}})
	check(t, createFailingCronJob(ctx, s, ns))
	created := time.Now()
	runs := &cronRuns{s: s, ns: ns, cronJob: cronJobName, seen: map[string]*cronRun{}}

	// The first run: the cronjob controller creates its Job at the next minute.
	check(t, framework.PollEvery(ctx, 3*time.Minute, time.Second, func() (bool, error) {
		return runs.observe(ctx) == nil && len(runs.seen) > 0, nil
	}))
	firstRun := runs.first().created
	t.Logf("first run %s created %s after the CronJob", runs.first().name, firstRun.Sub(created).Round(time.Second))

	mount := waitRealEvent(t, s, ns, scenarios.RealEvent{Kind: "Pod", Object: "*", Reason: "FailedMount", Message: fmt.Sprintf("secret %q not found", cronJobSecret)})
	firstFailure := mount.FirstTimestamp.Time
	if firstFailure.IsZero() {
		firstFailure = mount.EventTime.Time
	}
	t.Logf("%s wrote %s %s on Pod/%s at %s: %q", eventComponent(mount), mount.Type, mount.Reason, mount.InvolvedObject.Name, firstFailure.Format("15:04:05"), mount.Message)
	if got := waitObjectCauseIs(t, s, ns, "Pod", mount.InvolvedObject.Name, "FailedMount", "secret_not_found"); got != "secret_not_found" {
		t.Errorf("kubecause calls FailedMount %q %s, want secret_not_found", mount.Message, got)
	}

	// The pager: the CronJob's alert, once.
	cronAlert := map[string]string{"alertname": "KubecauseCronJobFailing", "namespace": ns, "workload_type": "CronJob", "workload": cronJobName}
	var firedAt, activeAt time.Time
	if got, err := s.Webhook.WaitFiring(alertTimeout, cronAlert); err != nil {
		t.Errorf("no KubecauseCronJobFailing naming CronJob %s/%s within %s of its first failure: %v", ns, cronJobName, alertTimeout, err)
	} else {
		firedAt = got[0].Received
		t.Logf("KubecauseCronJobFailing received %s after the first failure: %v", firedAt.Sub(firstFailure).Round(time.Second), got[0])
		activeAt = incidentActiveAt(t, s, withCause(cronAlert, got[0].Labels["cause"]))
	}

	// The run's Job fails at its deadline.
	deadline := waitRealEvent(t, s, ns, scenarios.RealEvent{Kind: "Job", Object: "*", Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline"})
	t.Logf("%s wrote %s %s on Job/%s: %q", eventComponent(deadline), deadline.Type, deadline.Reason, deadline.InvolvedObject.Name, deadline.Message)
	if got := waitObjectCauseIs(t, s, ns, "Job", deadline.InvolvedObject.Name, "DeadlineExceeded", "job_deadline_exceeded"); got != "job_deadline_exceeded" {
		t.Errorf("kubecause calls DeadlineExceeded %q %s, want job_deadline_exceeded", deadline.Message, got)
	}
	checkExactCount(t, s, ns, ns, "FailedMount")
	checkExactCount(t, s, ns, ns, "DeadlineExceeded")

	// The runs fail for cronJobFailing from the first one on.
	err := framework.PollEvery(ctx, cronJobFailing+5*time.Minute, 5*time.Second, func() (bool, error) {
		if err := runs.observe(ctx); err != nil {
			return false, nil
		}
		return time.Since(firstRun) >= cronJobFailing && runs.count("Failed") >= cronJobMinFailedRuns, nil
	})
	t.Logf("runs of CronJob %s in %s since the first:%s", cronJobName, time.Since(firstRun).Round(time.Second), runs)
	if err != nil {
		t.Fatalf("want %d failed runs of CronJob %s in %s: %d (%v)", cronJobMinFailedRuns, cronJobName, cronJobFailing, runs.count("Failed"), err)
	}
	if n := runs.count("Complete"); n != 0 {
		t.Errorf("%d runs completed without the Secret", n)
	}
	recordRealMessages(t, s)

	// What the on-call got while the runs failed.
	cron, others := cronJobDeliveries(s.Webhook.Deliveries(), cronAlert, ns)
	logDeliveries(t, fmt.Sprintf("notifications of KubecauseCronJobFailing in %s of failing runs", time.Since(firstRun).Round(time.Second)), cron)
	logDeliveries(t, fmt.Sprintf("other notifications naming namespace %s", ns), others)
	if len(cron) != 1 || !cron[0].Has(cronAlert, "firing") || len(cron[0].Alerts) != 1 {
		t.Errorf("want one firing notification of KubecauseCronJobFailing naming CronJob %s, with that alert alone; got %d", cronJobName, len(cron))
	}
	for _, d := range cron {
		for _, a := range d.Alerts {
			if a.Labels["cause"] != "secret_not_found" || a.Labels["severity"] != "warning" || a.Annotations["runbook_url"] == "" || a.Annotations["description"] == "" {
				t.Errorf("KubecauseCronJobFailing: want cause secret_not_found, severity warning, a runbook and a description: %v %v", a, a.Annotations)
			}
		}
	}
	t.Logf("every alert notified, by status and name: %v", notifiedByName(s.Webhook.Deliveries()))
	if len(others) > 0 {
		t.Errorf("%d notifications of other alerts name namespace %s (want the CronJob's alert alone: not each run's pod, not each Job's failure)", len(others), ns)
	}
	if firedAt.IsZero() {
		t.Fatalf("KubecauseCronJobFailing never fired: nothing to resolve")
	}
	if at := incidentActiveAt(t, s, withCause(cronAlert, cron[0].Alerts[0].Labels["cause"])); !at.Equal(activeAt) {
		t.Errorf("KubecauseCronJobFailing active since %s after the failing runs, %s when it fired: it was not kept between runs", at, activeAt)
	}

	// The fix: the Secret exists. The next run mounts it and its container exits 0.
	_, err = s.Cluster.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: cronJobSecret, Namespace: ns},
		StringData: map[string]string{"token": "e2e"},
	}, metav1.CreateOptions{})
	check(t, err)
	fixed := time.Now()
	var success *cronRun
	check(t, framework.PollEvery(ctx, 4*time.Minute, time.Second, func() (bool, error) {
		if err := runs.observe(ctx); err != nil {
			return false, nil
		}
		success = runs.completedAfter(time.Time{})
		return success != nil, nil
	}))
	t.Logf("run %s (created %s after the fix) completed %s after the fix", success.name, success.created.Sub(fixed).Round(time.Second), success.ended.Sub(fixed).Round(time.Second))
	// That run resolves the alert: its resolved notification comes before a later run, created
	// after the successful one, completes (a minute later), not with a later success.
	var next *cronRun
	_ = framework.PollEvery(ctx, resolveTimeout, time.Second, func() (bool, error) {
		cur := s.Webhook.Current(cronAlert)
		firing := len(cur) == 0
		for _, n := range cur {
			firing = firing || n.Status != "resolved"
		}
		if !firing {
			return true, nil
		}
		if next == nil && runs.observe(ctx) == nil {
			next = runs.completedAfter(success.created)
		}
		return false, nil
	})
	if next != nil {
		t.Errorf("KubecauseCronJobFailing not resolved by the successful run %s (completed %s) but after run %s completed at %s",
			success.name, success.ended.Format("15:04:05"), next.name, next.ended.Format("15:04:05"))
	}
	resolved, err := s.Webhook.WaitResolved(resolveTimeout, cronAlert)
	if err != nil {
		// What the rules hold for the CronJob: its last success and each cause's last failure.
		for _, q := range []string{"kube_cronjob_status_last_successful_time", "namespace_workload:kubecause_cronjob_last_success:max",
			"namespace_workload_cause:kubecause_cronjob_causes_kept:max", "ALERTS"} {
			q = fmt.Sprintf(`%s{namespace=%q}`, q, ns)
			v, qerr := s.Prometheus.API.Query(ctx, q)
			t.Logf("%s: %v %v", q, v, qerr)
		}
		t.Fatalf("KubecauseCronJobFailing not resolved %s after the fix (run %s completed at %s): %v", resolveTimeout, success.name, success.ended.Format("15:04:05"), err)
	}
	resolvedAt := resolved[0].Received
	t.Logf("KubecauseCronJobFailing resolved %s after the fix, %s after the run completed: %v",
		resolvedAt.Sub(fixed).Round(time.Second), resolvedAt.Sub(success.ended).Round(time.Second), resolved[0])

	// A later run succeeds too, and the alert stays resolved.
	var later *cronRun
	check(t, framework.PollEvery(ctx, 3*time.Minute, time.Second, func() (bool, error) {
		if err := runs.observe(ctx); err != nil {
			return false, nil
		}
		later = runs.completedAfter(resolvedAt)
		return later != nil, nil
	}))
	t.Logf("run %s, created after the resolution, completed", later.name)
	alerts, err := s.Prometheus.API.Alerts(ctx)
	check(t, err)
	for _, a := range alerts {
		if a.Labels["alertname"] == cronAlert["alertname"] && a.Labels["namespace"] == ns {
			t.Errorf("Prometheus holds %s KubecauseCronJobFailing after the runs succeed: %v", a.State, a.Labels)
		}
	}
	cron, others = cronJobDeliveries(s.Webhook.Deliveries(), cronAlert, ns)
	logDeliveries(t, "notifications of KubecauseCronJobFailing", cron)
	if len(cron) != 2 || !cron[0].Has(cronAlert, "firing") || !cron[1].Has(cronAlert, "resolved") || len(cron[1].Alerts) != 1 {
		t.Errorf("want two notifications of KubecauseCronJobFailing, one firing then one resolved; got %d", len(cron))
	}
	if len(others) > 0 {
		logDeliveries(t, fmt.Sprintf("other notifications naming namespace %s", ns), others)
		t.Errorf("%d notifications of other alerts name namespace %s", len(others), ns)
	}
	t.Logf("every alert notified, by status and name: %v", notifiedByName(s.Webhook.Deliveries()))
	t.Logf("CronJob %s: first run %s, first failure %s, fired %s, %d failed runs, fixed %s, resolved %s (%s after the fix)",
		cronJobName, firstRun.Format("15:04:05"), firstFailure.Format("15:04:05"), firedAt.Format("15:04:05"), runs.count("Failed"),
		fixed.Format("15:04:05"), resolvedAt.Format("15:04:05"), resolvedAt.Sub(fixed).Round(time.Second))
}

// createFailingCronJob creates the CronJob: every minute, one run at a time, each a Job that
// gives up after its first pod (backoffLimit 0) or cronJobDeadline seconds, whose pod mounts
// the Secret cronJobSecret (absent until the fix) and exits 0.
func createFailingCronJob(ctx context.Context, s *framework.Stack, ns string) error {
	_, err := s.Cluster.Client.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: cronJobName, Namespace: ns},
		Spec: batchv1.CronJobSpec{
			Schedule:          "* * * * *",
			ConcurrencyPolicy: batchv1.ForbidConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				BackoffLimit:          ptrTo(int32(0)),
				ActiveDeadlineSeconds: ptrTo(int64(cronJobDeadline)),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					DNSPolicy:                     corev1.DNSDefault,
					TerminationGracePeriodSeconds: ptrTo(int64(1)),
					Containers: []corev1.Container{{Name: "main", Image: framework.TestappImage, ImagePullPolicy: corev1.PullIfNotPresent,
						Args:         []string{"-exit=0"},
						VolumeMounts: []corev1.VolumeMount{{Name: "credentials", MountPath: "/etc/report", ReadOnly: true}}}},
					Volumes: []corev1.Volume{{Name: "credentials", VolumeSource: corev1.VolumeSource{
						Secret: &corev1.SecretVolumeSource{SecretName: cronJobSecret}}}},
				}},
			}},
		},
	}, metav1.CreateOptions{})
	return err
}

// cronRun is a Job of the CronJob as the test saw it.
type cronRun struct {
	name    string
	created time.Time
	result  string // "" while it runs, then "Complete" or "Failed" and the condition's reason
	ended   time.Time
}

// cronRuns remembers every Job of a CronJob it saw and how it ended: the cronjob controller
// deletes the failed ones beyond failedJobsHistoryLimit (1 by default) when the next ends.
type cronRuns struct {
	s       *framework.Stack
	ns      string
	cronJob string
	seen    map[string]*cronRun
}

// observe lists the namespace's Jobs once.
func (r *cronRuns) observe(ctx context.Context) error {
	jobs, err := r.s.Cluster.Client.BatchV1().Jobs(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, j := range jobs.Items {
		owned := false
		for _, o := range j.OwnerReferences {
			owned = owned || (o.Kind == "CronJob" && o.Name == r.cronJob)
		}
		if !owned {
			continue
		}
		run := r.seen[j.Name]
		if run == nil {
			run = &cronRun{name: j.Name, created: j.CreationTimestamp.Time}
			r.seen[j.Name] = run
		}
		for _, c := range j.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				continue
			}
			switch c.Type {
			case batchv1.JobComplete:
				run.result, run.ended = "Complete", c.LastTransitionTime.Time
			case batchv1.JobFailed:
				run.result, run.ended = "Failed "+c.Reason, c.LastTransitionTime.Time
			}
		}
	}
	return nil
}

// sorted returns the runs seen, oldest first.
func (r *cronRuns) sorted() []*cronRun {
	out := make([]*cronRun, 0, len(r.seen))
	for _, run := range r.seen {
		out = append(out, run)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].created.Before(out[j].created) })
	return out
}

func (r *cronRuns) first() *cronRun { return r.sorted()[0] }

// count is the number of runs whose result begins with result.
func (r *cronRuns) count(result string) int {
	n := 0
	for _, run := range r.seen {
		if strings.HasPrefix(run.result, result) && run.result != "" {
			n++
		}
	}
	return n
}

// completedAfter returns the first run created after t that completed, or nil.
func (r *cronRuns) completedAfter(t time.Time) *cronRun {
	for _, run := range r.sorted() {
		if run.result == "Complete" && run.created.After(t) {
			return run
		}
	}
	return nil
}

func (r *cronRuns) String() string {
	var b strings.Builder
	for _, run := range r.sorted() {
		result := run.result
		if result == "" {
			result = "running"
		}
		fmt.Fprintf(&b, "\n  %s created %s: %s", run.name, run.created.Format("15:04:05"), result)
		if !run.ended.IsZero() {
			fmt.Fprintf(&b, " at %s", run.ended.Format("15:04:05"))
		}
	}
	return b.String()
}

// cronJobDeliveries splits the notifications received: those carrying the CronJob's alert, and
// those carrying any other alert naming namespace ns.
func cronJobDeliveries(all []framework.Delivery, cronAlert map[string]string, ns string) (cron, others []framework.Delivery) {
	for _, d := range all {
		if d.Has(cronAlert, "") {
			cron = append(cron, d)
			continue
		}
		for _, a := range d.Alerts {
			if a.Labels["namespace"] == ns {
				others = append(others, d)
				break
			}
		}
	}
	return cron, others
}

// withCause is match with the label cause.
func withCause(match map[string]string, cause string) map[string]string {
	m := map[string]string{"cause": cause}
	for k, v := range match {
		m[k] = v
	}
	return m
}

// notifiedByName counts the alerts the notifications carried, by status and alert name.
func notifiedByName(ds []framework.Delivery) map[string]int {
	n := map[string]int{}
	for _, d := range ds {
		for _, a := range d.Alerts {
			n[a.Status+" "+a.Labels["alertname"]]++
		}
	}
	return n
}

func logDeliveries(t *testing.T, what string, ds []framework.Delivery) {
	t.Helper()
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "\n  %v", d)
	}
	t.Logf("%s: %d%s", what, len(ds), b.String())
}
