package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// The REST client asks for the right paths and query, prefers protobuf, and returns typed lists.
// (The real apiserver is exercised by the e2e tests; this pins the request shapes.)
func TestClientRequests(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		if got := r.Header.Get("Accept"); got != "application/vnd.kubernetes.protobuf,application/json" {
			t.Errorf("Accept = %q", got)
		}
		w.Header().Set("Content-Type", "application/json")
		var body any
		switch r.URL.Path {
		case "/api/v1/events", "/api/v1/namespaces/prod/events":
			body = corev1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "v1"},
				Items: []corev1.Event{{ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: "prod"}, Reason: "FailedMount"}}}
		case "/apis/discovery.k8s.io/v1/namespaces/istio-system/endpointslices":
			body = discoveryv1.EndpointSliceList{TypeMeta: metav1.TypeMeta{Kind: "EndpointSliceList", APIVersion: "discovery.k8s.io/v1"},
				Items: []discoveryv1.EndpointSlice{{ObjectMeta: metav1.ObjectMeta{Name: "s1"}}}}
		default:
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	defer srv.Close()

	c, err := New(&rest.Config{Host: srv.URL, QPS: 100, Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	obj, err := c.List(ctx, Events, "", metav1.ListOptions{FieldSelector: "type=Warning", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := obj.(*corev1.EventList); !ok || len(l.Items) != 1 || l.Items[0].Reason != "FailedMount" {
		t.Fatalf("all-namespace Event list = %#v", obj)
	}
	if _, err := c.List(ctx, Events, "prod", metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	obj, err = c.List(ctx, EndpointSlices, "istio-system", metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=istiod"})
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := obj.(*discoveryv1.EndpointSliceList); !ok || len(l.Items) != 1 {
		t.Fatalf("EndpointSlice list = %#v", obj)
	}
	if _, err := c.List(ctx, Pods, "nowhere", metav1.ListOptions{}); err == nil {
		t.Fatal("a 404 was not an error")
	}
	want := []string{
		"/api/v1/events?fieldSelector=type%3DWarning&limit=500",
		"/api/v1/namespaces/prod/events?",
		"/apis/discovery.k8s.io/v1/namespaces/istio-system/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Distiod",
		"/api/v1/namespaces/nowhere/pods?",
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != len(want) {
		t.Fatalf("requests %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("request %d = %q, want %q", i, seen[i], want[i])
		}
	}
}

func TestObjectMatchesResource(t *testing.T) {
	for r, want := range map[Resource]string{Events: "*v1.Event", Pods: "*v1.Pod", Services: "*v1.Service",
		Endpoints: "*v1.Endpoints", EndpointSlices: "*v1.EndpointSlice"} {
		if got := typeName(Object(r)); got != want {
			t.Errorf("Object(%v) is %s, want %s", r, got, want)
		}
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// frozenAPIServer is a 127.0.0.1 listener that accepts connections and never answers (it reads
// what is sent, so requests are written in full).
func frozenAPIServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestFrozenAPIServerFailsTheRequest: a list or watch sent to an apiserver that accepts the
// connection and never answers fails after AnswerTimeout with an error that says so, where it
// waited for good.
func TestFrozenAPIServerFailsTheRequest(t *testing.T) {
	defer func(d time.Duration) { AnswerTimeout = d }(AnswerTimeout)
	AnswerTimeout = 200 * time.Millisecond
	c, err := New(&rest.Config{Host: frozenAPIServer(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // the test's own bound
	defer cancel()
	for _, op := range []string{"list", "watch"} {
		start := time.Now()
		var err error
		if op == "list" {
			_, err = c.List(ctx, Events, "", metav1.ListOptions{ResourceVersion: "0", Limit: 500})
		} else {
			_, err = c.Watch(ctx, Events, "", metav1.ListOptions{ResourceVersion: "10", AllowWatchBookmarks: true})
		}
		if err == nil || !strings.Contains(err.Error(), "did not begin to answer within 200ms") || ctx.Err() != nil {
			t.Fatalf("%s against a frozen apiserver: %v after %v; want the answer timeout's error", op, err, time.Since(start))
		}
		t.Logf("%s: %v after %v", op, err, time.Since(start).Round(time.Millisecond))
	}
}
