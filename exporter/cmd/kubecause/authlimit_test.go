package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/crypto/bcrypt"
)

// authServer serves h on 127.0.0.1 as runExporter does (authLimit.servers, exporter-toolkit with
// a web configuration of basic-auth users) and returns its URL and a function that rewrites the
// web configuration (the toolkit reads it at every request).
func authServer(t *testing.T, a *authLimit, h http.Handler, users map[string]string) (string, func(map[string]string)) {
	t.Helper()
	config := filepath.Join(t.TempDir(), "web.yml")
	write := func(users map[string]string) {
		t.Helper()
		text := "basic_auth_users:\n"
		for u, h := range users {
			text += fmt.Sprintf("  %s: %s\n", u, h)
		}
		// Replaced at once: the toolkit, reading a half-written file, would serve without auth.
		if err := os.WriteFile(config+".new", []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(config+".new", config); err != nil {
			t.Fatal(err)
		}
	}
	write(users)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addrs := []string{ln.Addr().String()}
	flags := &web.FlagConfig{WebListenAddresses: &addrs, WebConfigFile: &config}
	l := a.servers(func() *http.Server { return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second} }, flags)
	if len(l) != 1 {
		t.Fatalf("%d servers for one address", len(l))
	}
	logger := promslog.NewNopLogger()
	go func() { _ = web.Serve(ln, l[0].srv, l[0].flags, logger) }()
	t.Cleanup(func() { _ = l[0].srv.Close() })
	return "http://" + ln.Addr().String() + "/metrics", write
}

func hash(t *testing.T, password string, cost int) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// TestScrapeServedUnderAPasswordFlood: 150 clients sending wrong passwords (for the scrape user,
// or for users that do not exist) keep exporter-toolkit's one-at-a-time bcrypt busy; a scrape
// with the right password is answered behind at most a few of their checks, not behind all of
// them. Before authLimit it waited behind every check queued (46 s in the report at cost 10).
//
// The toolkit's cache of checked passwords would answer the scrape without bcrypt until the flood
// evicts it (at random); the test changes the scrape user's hash (same password, new salt) before
// the measured scrape, so the toolkit has to check it again, as after an eviction.
//
// Under the race detector, bcrypt is some fifty times slower: the hashes are of the lowest cost
// and the flood is for the scrape user only (the toolkit checks unknown users against a cost-10
// hash), so that the same counts are reached in the same time.
func TestScrapeServedUnderAPasswordFlood(t *testing.T) {
	const hostile = 150
	cost, unknownUsers := bcrypt.DefaultCost, true // 10, what htpasswd -B and the toolkit's docs use
	if raceEnabled {
		cost, unknownUsers = bcrypt.MinCost, false
	}
	a := newAuthLimit()
	var served atomic.Int64
	inner := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		_, _ = io.WriteString(w, "ok\n")
	})
	url, writeConfig := authServer(t, a, inner, map[string]string{"prometheus": hash(t, "right", cost)})

	get := func(c *http.Client, user, pass string) (int, error) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.SetBasicAuth(user, pass)
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	scraper := &http.Client{Timeout: 2 * time.Minute}
	if code, err := get(scraper, "prometheus", "right"); err != nil || code != http.StatusOK {
		t.Fatalf("first scrape: %d %v", code, err)
	}

	// The flood: each client sends a random password, a third of them for a user that does not
	// exist (checked against the toolkit's cost-10 dummy hash), until the test ends.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var inFlight, checked atomic.Int64 // checked: answered 401, i.e. after a bcrypt check
	defer func() { cancel(); wg.Wait() }()
	for i := range hostile {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: &http.Transport{}}
			defer c.CloseIdleConnections()
			user := "prometheus"
			if unknownUsers && i%3 == 0 {
				user = fmt.Sprintf("nobody%d", i)
			}
			for ctx.Err() == nil {
				inFlight.Add(1)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				req.SetBasicAuth(user, rand.Text())
				resp, err := c.Do(req)
				inFlight.Add(-1)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusUnauthorized {
					checked.Add(1)
				}
			}
		}()
	}
	// Wait until the flood is on: most clients waiting for an answer, checks being made.
	deadline := time.Now().Add(time.Minute)
	for inFlight.Load() < hostile*2/3 || checked.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the flood did not start: %d in flight, %d checked", inFlight.Load(), checked.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}

	writeConfig(map[string]string{"prometheus": hash(t, "right", cost)})
	for round := range 3 {
		before, start := checked.Load(), time.Now()
		code, err := get(scraper, "prometheus", "right")
		took, during, flooding := time.Since(start), checked.Load()-before, inFlight.Load()
		t.Logf("round %d: scrape %d in %v, behind %d wrong-password checks, %d flood requests in flight", round, code, took.Round(time.Millisecond), during, flooding)
		if err != nil || code != http.StatusOK {
			t.Fatalf("round %d: the scrape with the right password: %d %v", round, code, err)
		}
		// At most authChecks unverified requests are in the toolkit when it arrives; a few more may
		// take the lock before it in the first millisecond of its wait (sync.Mutex's normal mode).
		if during > 2*authChecks+2 {
			t.Errorf("round %d: the scrape waited behind %d wrong-password checks; want at most %d", round, during, 2*authChecks+2)
		}
		if flooding < hostile/2 {
			t.Errorf("round %d: only %d flood requests in flight when the scrape was answered: the flood was not on", round, flooding)
		}
		writeConfig(map[string]string{"prometheus": hash(t, "right", cost)})
	}
	if n := served.Load(); n != 4 {
		t.Errorf("the handler served %d requests, want the 4 scrapes", n)
	}
	// Under the race detector the hashes are of the least cost, each check well under authWait,
	// so the flood may be checked without a refusal (seen in make test); the refusals and their
	// counter are then TestEveryListenAddressHasTheLimit's, whose cost-12 hash keeps them certain.
	if n := testutil.ToFloat64(a.refused); n == 0 && !raceEnabled {
		t.Errorf("kubecause_http_auth_refused_total = 0 after a flood of %d clients", hostile)
	}
}

// TestEveryListenAddressHasTheLimit: with two --web.listen-address, each address gets a server of
// its own (the toolkit wraps the handler of the server it serves, once per listener), and on each
// the wrong passwords past the checks in progress are refused with 429 and counted. The scrape
// user's hash is of cost 12 (a quarter of a second or more per check), so that twelve wrong
// passwords at once cannot all be checked within authWait.
func TestEveryListenAddressHasTheLimit(t *testing.T) {
	if raceEnabled {
		t.Skip("bcrypt at cost 12 takes too long under the race detector; TestScrapeServedUnderAPasswordFlood covers the limit there")
	}
	a := newAuthLimit()
	config := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(config, []byte("basic_auth_users:\n  prometheus: "+hash(t, "right", 12)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var addrs []string
	var lns []net.Listener
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		addrs = append(addrs, ln.Addr().String())
	}
	flags := &web.FlagConfig{WebListenAddresses: &addrs, WebConfigFile: &config}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	l := a.servers(func() *http.Server { return &http.Server{Handler: ok, ReadHeaderTimeout: 10 * time.Second} }, flags)
	if len(l) != 2 || len(*l[0].flags.WebListenAddresses) != 1 || (*l[1].flags.WebListenAddresses)[0] != addrs[1] {
		t.Fatalf("servers for %q: %d, want one per address", addrs, len(l))
	}
	for i := range l {
		go func() { _ = web.Serve(lns[i], l[i].srv, l[i].flags, promslog.NewNopLogger()) }()
		t.Cleanup(func() { _ = l[i].srv.Close() })
	}
	const wrong = 12
	for i, addr := range addrs {
		before, refused := testutil.ToFloat64(a.refused), 0
		codes := make(chan int, wrong)
		for range wrong {
			go func() {
				req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
				req.SetBasicAuth("prometheus", rand.Text())
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					codes <- 0
					return
				}
				resp.Body.Close()
				codes <- resp.StatusCode
			}()
		}
		for range wrong {
			switch c := <-codes; c {
			case http.StatusTooManyRequests:
				refused++
			case http.StatusUnauthorized:
			default:
				t.Errorf("address %d: a wrong password answered %d", i, c)
			}
		}
		t.Logf("address %d: %d of %d wrong passwords refused with 429", i, refused, wrong)
		if refused == 0 {
			t.Errorf("address %d: no wrong password refused: the limit is not in front of the toolkit there", i)
		}
		if got := testutil.ToFloat64(a.refused) - before; got != float64(refused) {
			t.Errorf("address %d: %d answers 429, kubecause_http_auth_refused_total rose by %g", i, refused, got)
		}
	}
}
