package events

import (
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubecause/kubecause/exporter/kube"
)

// Source is one watch scope (all namespaces, or one namespace) feeding the Engine.
// It is the store of a client-go reflector: the reflector lists and watches, the Source counts.
type Source struct {
	e      *Engine
	idx    uint16
	name   string
	synced bool  // guarded by Engine.mu
	list   uint8 // generation of the latest list read (wraps, skipping 0); guarded by Engine.mu
	// gen is the last list generation handed out (to a list or a streamed list's attempt),
	// streamGen the current streamed list's (0: none), attempts the streamed lists begun since
	// the last list was read. Guarded by Engine.mu.
	gen, streamGen uint8
	attempts       int
	// contact is how far the source has heard from the apiserver (unix seconds): the last write
	// of the latest Event a notification delivered, or when a bookmark or a list arrived.
	// Guarded by Engine.mu.
	contact int64
	// listed is when the source's latest list was read, created how many Events new to kubecause
	// it has seen created while watching since: the rate of new Events before a gap. Guarded by
	// Engine.mu.
	listedAt int64
	created  int64
	// restored: the source diffs its first list against a snapshot (snapshot.go) until it is
	// read; snapIdx is the index of the snapshot's scope it took up (noScope: none, the scopes
	// changed). Guarded by Engine.mu.
	restored bool
	snapIdx  uint16
}

var (
	_ cache.ReflectorStore         = (*Source)(nil)
	_ cache.TransformingStore      = (*Source)(nil)
	_ cache.ReflectorBookmarkStore = (*Source)(nil)
)

// NewSource adds a watch scope. The Engine is synced once every source has read its first list.
func (e *Engine) NewSource(name string) *Source {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &Source{e: e, idx: uint16(len(e.sources)), name: name}
	e.sources = append(e.sources, s)
	e.takeUp(s)
	return s
}

func (s *Source) Add(obj interface{}) error {
	s.e.m.setUp(1)
	s.e.add(s.idx, obj)
	return nil
}

func (s *Source) Update(obj interface{}) error {
	s.e.m.setUp(1)
	s.e.update(s.idx, obj)
	return nil
}

func (s *Source) Delete(obj interface{}) error {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	s.e.delete(s.idx, obj)
	return nil
}

func (s *Source) Replace(list []interface{}, _ string) error {
	s.e.m.setUp(1)
	if s.e.replace(s, list) && s.e.cfg.OnSynced != nil {
		s.e.cfg.OnSynced()
	}
	return nil
}

func (s *Source) Resync() error { return nil }

func (s *Source) Bookmark(string) error {
	s.e.m.setUp(1)
	s.e.mu.Lock()
	s.e.touch(s.idx)
	s.e.mu.Unlock()
	return nil
}

// Transformer is what the reflector's temporary store of a streamed (WatchList) list keeps of each
// Event: nothing of its own. The Events of a streamed list are read before the reflector sees them
// (stream): each one is counted into the engine's compact state at once (as the baseline of the
// first list, or diffed against what is remembered on a relist) and marked with the list's
// generation in its record, and the reflector gets a stand-in that its temporary store keys
// under one key, whatever the number of Events. Reading 1,000,000 Events at start-up therefore
// holds no Event objects, no placeholders and no namespace/name keys (docs/performance.md). An
// Event that reaches the transform itself (not through stream) is read there and kept as its UID
// key. A list read without streaming (paged List) reaches Replace as Event objects and is
// handled there.
func (s *Source) Transformer() cache.TransformFunc { return s.listed }

// streamedMarker is the generateName of the stand-ins stream gives the reflector: no Event from
// the apiserver has it (a generateName is a name prefix, which cannot hold a NUL).
const streamedMarker = "\x00kubecause-streamed"

// streamed is what the temporary store keeps of the stand-ins: that the list was streamed.
type streamed struct{}

// listed is what the reflector keeps of an Event the transform read itself and found part of the
// source's state: its UID key, boxed on its own (16 bytes). An Event that is not part of the
// state (not counted, or invalid) is kept as notListed, shared: nothing of its own.
type listed uidKey

// notListed is the placeholder of a streamed Event that is not part of the source's state.
type notListed struct{}

// GetObjectMeta makes the placeholder keyable should client-go ever key it (the reflector keys
// the decoded Event, before the transform): the UID key stands in for the name.
func (l listed) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: hex.EncodeToString(l[:])}
}

// GetObjectMeta: as listed's, with no name.
func (notListed) GetObjectMeta() metav1.Object { return &metav1.ObjectMeta{} }

// GetObjectMeta: as listed's, with no name.
func (streamed) GetObjectMeta() metav1.Object { return &metav1.ObjectMeta{} }

func (s *Source) listed(obj interface{}) (interface{}, error) {
	ev, ok := obj.(*corev1.Event)
	if !ok || ev == nil {
		return obj, nil // Replace reports it as not_an_event
	}
	if ev.GenerateName == streamedMarker {
		return streamed{}, nil
	}
	if k, counted := s.e.readListed(s, ev); counted {
		return listed(k), nil
	}
	return notListed{}, nil
}

// stream passes a watch through: it reports the Status of every ERROR notification (e.g. 410
// Gone when the watch's resource version expired), with closing set once the watch has expired
// or been stopped (what the stream says then is about its closing: client-go's "unable to decode
// an event from the watch stream" when the reflector closes it after a 410) and, for a watch that begins with the initial
// Events of a streamed list (initial), reads each of them into the engine as it arrives
// (Engine.readStreamed) and hands the reflector a stand-in instead (the Event object, emptied),
// until the bookmark that ends them. The stand-ins of Events added or modified all have the same
// (empty) key, so the reflector's temporary store holds one of them, whatever the number of
// Events; a deleted Event's stand-in has another key, so that its deletion from the store removes
// nothing. The stand-ins keep the resource version, which the reflector resumes from. (So the
// store's content is not what a LIST returns: client-go's watch-list consistency check, a test aid
// turned on by KUBE_WATCHLIST_INCONSISTENCY_DETECTOR, is not for kubecause.)
func (s *Source) stream(w watch.Interface, initial bool, report func(st *metav1.Status, closing bool)) watch.Interface {
	var gen uint8
	if initial {
		gen = s.e.beginStream(s)
	}
	sw := &stoppedWatch{}
	sw.Interface = watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		switch ev.Type {
		case watch.Error:
			if st, ok := ev.Object.(*metav1.Status); ok && report != nil {
				report(st, sw.ended.Load())
				if expired(&apierrors.StatusError{ErrStatus: *st}) {
					sw.ended.Store(true)
				}
			}
		case watch.Bookmark:
			if m, err := meta.Accessor(ev.Object); initial && err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				initial = false
			}
		case watch.Added, watch.Modified, watch.Deleted:
			if o, ok := ev.Object.(*corev1.Event); initial && ok && o != nil {
				deleted := ev.Type == watch.Deleted
				s.e.readStreamed(s, gen, deleted, o)
				// The decoded Event becomes its own stand-in (in place, as a transform may:
				// each notification's object is decoded afresh, and no one else holds it).
				*o = corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: streamedMarker, ResourceVersion: o.ResourceVersion}}
				if deleted {
					o.Name = streamedMarker
				}
			}
		}
		return ev, true
	})
	return sw
}

// stoppedWatch is a watch that knows whether it has ended: expired, or stopped by its reader.
type stoppedWatch struct {
	watch.Interface
	ended atomic.Bool
}

func (w *stoppedWatch) Stop() {
	w.ended.Store(true)
	w.Interface.Stop()
}

// Watch runs a reflector of core/v1 Events in namespace ("" = all) with a server-side field
// selector, until ctx is done. Failures are logged, counted, and retried with the reflector's
// backoff (0.8 s doubling to 30 s); the process never exits because the apiserver is away.
func (s *Source) Watch(ctx context.Context, client kube.Client, namespace, fieldSelector string, logger *slog.Logger) {
	m := s.e.m
	fail := func(op string, err error) {
		if ctx.Err() != nil {
			return // shutting down: the watch was closed on purpose
		}
		if expired(err) {
			// The resource version to resume from is too old (410 Gone: compacted, or out of the
			// watch cache's window): the reflector relists. Routine, not a failure.
			logger.Debug("Event watch expired; relisting", "source", s.name, "op", op, "err", err)
			return
		}
		m.watchErrors.Inc()
		m.setUp(0)
		logger.Error("cannot "+op+" Events; retrying with backoff", "source", s.name, "namespace", namespace, "err", err)
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = fieldSelector
			l, err := client.List(ctx, kube.Events, namespace, opts)
			if err != nil {
				fail("list", err)
			}
			return l, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = fieldSelector
			w, err := client.Watch(ctx, kube.Events, namespace, opts)
			if err != nil {
				fail("watch", err)
				return nil, err
			}
			initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
			return s.stream(w, initial, func(st *metav1.Status, closing bool) {
				if err := (&apierrors.StatusError{ErrStatus: *st}); !closing {
					fail("watch", err)
				} else if ctx.Err() == nil {
					logger.Debug("Event watch stream closed after it ended", "source", s.name, "err", err)
				}
			}), nil
		},
	}
	r := cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), &corev1.Event{}, s,
		cache.ReflectorOptions{Name: "events/" + s.name, TypeDescription: "core/v1 Event"})
	r.RunWithContext(ctx)
}

// expired says whether err is a watch or list expiry: 410 Gone, reason Expired or Gone (the
// apiserver's "too old resource version: …" and "The resourceVersion for the provided watch is
// too old.").
func expired(err error) bool {
	var st apierrors.APIStatus
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || errors.As(err, &st) && st.Status().Code == http.StatusGone
}
