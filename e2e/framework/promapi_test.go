package framework

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Answers as Prometheus' HTTP API gives them; PromAPI must turn them into the framework's types.
var promAnswers = map[string]string{
	"/api/v1/query?vector": `{"status":"success","data":{"resultType":"vector","result":[
		{"metric":{"__name__":"up","job":"kubecause"},"value":[1700000000.5,"1"]},
		{"metric":{"job":"kube-state-metrics"},"value":[1700000000.5,"0.25"]}]}}`,
	"/api/v1/query?scalar": `{"status":"success","data":{"resultType":"scalar","result":[1700000000.5,"42"]}}`,
	"/api/v1/query?bad":    `{"status":"error","errorType":"bad_data","error":"parse error"}`,
	"/api/v1/targets": `{"status":"success","data":{"activeTargets":[
		{"labels":{"job":"kubecause","instance":"127.0.0.1:1"},"health":"up","lastError":""},
		{"labels":{"job":"ksm","instance":"127.0.0.1:2"},"health":"down","lastError":"refused"}],"droppedTargets":[]}}`,
	"/api/v1/rules": `{"status":"success","data":{"groups":[{"name":"g","file":"f.yaml","interval":1,"rules":[
		{"type":"alerting","name":"A","query":"up == 0","duration":5,"labels":{"severity":"warning"},
		 "annotations":{"summary":"S."},"alerts":[],"health":"ok","lastError":"","state":"inactive"},
		{"type":"recording","name":"r:up","query":"sum(up)","labels":{},"health":"err","lastError":"boom"}]}]}}`,
	"/api/v1/alerts": `{"status":"success","data":{"alerts":[
		{"labels":{"alertname":"A"},"annotations":{"summary":"S."},"state":"firing","activeAt":"2026-01-01T00:00:00Z","value":"1"}]}}`,
}

func TestPromAPI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Path
		if key == "/api/v1/query" {
			_ = r.ParseForm()
			key += "?" + r.Form.Get("query")
		}
		body, ok := promAnswers[key]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if key == "/api/v1/query?bad" {
			w.WriteHeader(http.StatusBadRequest)
		}
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	ctx := context.Background()
	a := &PromAPI{Base: srv.URL}

	v, err := a.Query(ctx, "vector")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), `{__name__="up", job="kubecause"} 1; {job="kube-state-metrics"} 0.25`; got != want {
		t.Errorf("vector = %s, want %s", got, want)
	}
	v, err = a.QueryAt(ctx, "scalar", time.Unix(1700000000, 0))
	if err != nil || v.String() != "{} 42" {
		t.Errorf("scalar = %s, %v", v, err)
	}
	if _, err := a.Query(ctx, "bad"); err == nil {
		t.Error("an error answer must be an error")
	}
	if v, err := a.WaitValue(ctx, "scalar", 42, time.Second); err != nil || len(v) != 1 {
		t.Errorf("WaitValue = %s, %v", v, err)
	}

	ts, err := a.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(ts), "[{kubecause 127.0.0.1:1 up } {ksm 127.0.0.1:2 down refused}]"; got != want {
		t.Errorf("targets = %s, want %s", got, want)
	}
	if err := a.WaitTargetsUp(ctx, 300*time.Millisecond); err == nil {
		t.Error("WaitTargetsUp with a target down must fail")
	}

	groups, err := a.Rules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || groups[0].Name != "g" || groups[0].File != "f.yaml" || len(groups[0].Rules) != 2 {
		t.Fatalf("rules = %+v", groups)
	}
	al, rec := groups[0].Rules[0], groups[0].Rules[1]
	if al.Name != "A" || al.Type != "alerting" || al.Health != "ok" || al.State != "inactive" ||
		al.Labels["severity"] != "warning" || al.Annots["summary"] != "S." || al.Query != "up == 0" {
		t.Errorf("alerting rule = %+v", al)
	}
	if rec.Name != "r:up" || rec.Type != "recording" || rec.Health != "err" || rec.LastError != "boom" {
		t.Errorf("recording rule = %+v", rec)
	}

	alerts, err := a.Alerts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 || alerts[0].State != "firing" || alerts[0].Labels["alertname"] != "A" || alerts[0].Annotations["summary"] != "S." {
		t.Errorf("alerts = %+v", alerts)
	}
}
