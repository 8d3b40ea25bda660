package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/exporter-toolkit/web"
)

// exporter-toolkit checks basic-auth passwords with bcrypt, one at a time for the whole server,
// and remembers the last 100 results: clients sending wrong passwords (or unknown users, checked
// against a cost-10 hash) queue every scrape behind their bcrypt checks, and push the scraper's
// result out of that cache (150 such clients made a scrape wait 46 s at cost 10; at cost 12 none
// was answered in 60 s). authLimit sits in front of that check:
//   - a request whose credentials reached the handler before (known good) goes straight on;
//   - a request with other credentials waits at most authWait for one of authChecks slots, and
//     is refused with 429 past it (counted in kubecause_http_auth_refused_total);
//   - a request without credentials goes straight on (the toolkit answers 401 without bcrypt).
//
// So the toolkit's bcrypt queue holds at most authChecks unverified requests, and a scrape with
// the right password waits for at most that many checks and its own.
const (
	authChecks = 2
	authWait   = time.Second
	// authKnown bounds the credentials remembered as good: one per scraper is enough.
	authKnown = 16
)

type authLimit struct {
	slots   chan struct{}
	key     [32]byte // per process: the remembered hashes are of no use outside it
	mu      sync.Mutex
	known   map[[32]byte]time.Time // credentials seen accepted, when last seen
	refused prometheus.Counter
}

func newAuthLimit() *authLimit {
	a := &authLimit{
		slots: make(chan struct{}, authChecks),
		known: map[[32]byte]time.Time{},
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kubecause_http_auth_refused_total",
			Help: "HTTP requests with basic-auth credentials not yet seen accepted, refused with 429 because the credential checks in progress held every slot for a second (a flood of wrong passwords).",
		}),
	}
	_, _ = rand.Read(a.key[:])
	return a
}

// authState travels in the context of a request with credentials from front to inner: inner
// reached means the toolkit accepted them.
type authState struct {
	accepted bool
	onAccept func()
}

type authStateKey struct{}

// credentials is the keyed hash of a request's basic-auth user and password.
func (a *authLimit) credentials(user, pass string) [32]byte {
	m := hmac.New(sha256.New, a.key[:])
	m.Write([]byte(user))
	m.Write([]byte{0})
	m.Write([]byte(pass))
	var k [32]byte
	copy(k[:], m.Sum(nil))
	return k
}

func (a *authLimit) isKnown(k [32]byte) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.known[k]
	return ok
}

// remember records k as accepted now, forgetting the longest unseen past authKnown.
func (a *authLimit) remember(k [32]byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.known[k]; !ok && len(a.known) >= authKnown {
		var oldest [32]byte
		var when time.Time
		for c, seen := range a.known {
			if when.IsZero() || seen.Before(when) {
				oldest, when = c, seen
			}
		}
		delete(a.known, oldest)
	}
	a.known[k] = time.Now()
}

// forget drops k: the toolkit refused it (the password was changed).
func (a *authLimit) forget(k [32]byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.known, k)
}

// front wraps toolkit, the credential check exporter-toolkit built around a.inner(…).
func (a *authLimit) front(toolkit http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok {
			toolkit.ServeHTTP(w, r)
			return
		}
		k := a.credentials(user, pass)
		st := &authState{onAccept: func() { a.remember(k) }}
		if !a.isKnown(k) {
			t := time.NewTimer(authWait)
			select {
			case a.slots <- struct{}{}:
				t.Stop()
			case <-t.C:
				a.refused.Inc()
				w.Header().Set("Retry-After", "1")
				http.Error(w, "too many credential checks in progress; retry later", http.StatusTooManyRequests)
				return
			case <-r.Context().Done():
				t.Stop()
				return
			}
			// The slot is held while the toolkit checks, not while the accepted request is served.
			held := true
			release := func() {
				if held {
					held = false
					<-a.slots
				}
			}
			defer release()
			st.onAccept = func() { release(); a.remember(k) }
		}
		toolkit.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authStateKey{}, st)))
		if !st.accepted {
			a.forget(k)
		}
	})
}

// inner wraps the handler the toolkit serves once it has accepted the credentials.
func (a *authLimit) inner(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st, ok := r.Context().Value(authStateKey{}).(*authState); ok && !st.accepted {
			st.accepted = true
			st.onAccept()
		}
		h.ServeHTTP(w, r)
	})
}

// listener is one server of the main listener and the flags to serve it with.
type listener struct {
	srv   *http.Server
	flags *web.FlagConfig
}

// servers makes the servers of --web.listen-address, to serve with web.ListenAndServe (TLS and
// basic auth from --web.config.file), with a in front of the toolkit's credential check. The
// toolkit wraps srv.Handler in that check when it starts serving; a's front is put before it at
// the first connection (ConnContext runs in the serving goroutine after the toolkit's wrapping and
// before any request is read). One server per address, so that no two listeners wrap one server.
func (a *authLimit) servers(newServer func() *http.Server, flags *web.FlagConfig) []listener {
	addrs := []string{""}
	if systemd := flags.WebSystemdSocket != nil && *flags.WebSystemdSocket; !systemd && flags.WebListenAddresses != nil && len(*flags.WebListenAddresses) > 1 {
		addrs = *flags.WebListenAddresses
	}
	var out []listener
	for _, addr := range addrs {
		f := *flags
		if addr != "" {
			f.WebListenAddresses = &[]string{addr}
		}
		srv := newServer()
		srv.Handler = a.inner(srv.Handler)
		var once sync.Once
		srv.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
			once.Do(func() { srv.Handler = a.front(srv.Handler) })
			return ctx
		}
		out = append(out, listener{srv, &f})
	}
	return out
}
