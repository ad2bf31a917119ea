package inspect

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/ensemble/enstest"
)

// TestSearch: find by path and grep by data over a real tree, as zk-shell
// does, through a chroot; a node that denies READ is counted, not searched;
// MaxHits stops the search and says so.
func TestSearch(t *testing.T) {
	ens := enstest.Start(t, 1)
	admin := connect(t, ens.Servers())
	world := zk.WorldACL(zk.PermAll)
	for _, n := range []struct {
		path, data string
		acl        []zk.ACL
	}{
		{"/app", "", world},
		{"/app/db", "", world},
		{"/app/db/host", "db1.example.com", world},
		{"/app/db/port", "5432", world},
		{"/app/web", "", world},
		{"/app/web/host", "web.example.com\nport=8080", world},
		{"/app/web/db-url", "postgres://db1.example.com:5432/x", world},
		{"/app/secret", "db-password", zk.WorldACL(zk.PermCreate)},
		{"/other", "db elsewhere", world},
		{"/app/evil", "db1.example\x1b[8m hidden", world},
	} {
		if _, err := admin.Create(n.path, []byte(n.data), 0, n.acl); err != nil {
			t.Fatalf("create %s: %v", n.path, err)
		}
	}
	in := openInspector(t, Options{Servers: ens.Servers(), Chroot: "/app"})
	run := func(q SearchQuery) SearchProgress {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var last SearchProgress
		n := 0
		for p := range in.Search(ctx, q) {
			if len(p.Hits) < len(last.Hits) {
				t.Errorf("progress %d has %d hits, fewer than the one before (%d)", n, len(p.Hits), len(last.Hits))
			}
			last = p
			n++
		}
		if !last.Done {
			t.Fatalf("the search never said it was done: %+v", last)
		}
		return last
	}
	paths := func(p SearchProgress) []string {
		var out []string
		for _, h := range p.Hits {
			out = append(out, h.Path)
		}
		return out
	}
	t.Run("find", func(t *testing.T) {
		p := run(SearchQuery{Root: "/", Name: regexp.MustCompile(`db`)})
		if got, want := paths(p), []string{"/db", "/db/host", "/db/port", "/web/db-url"}; !slices.Equal(got, want) {
			t.Errorf("hits = %v, want %v (chroot-relative, /other outside the chroot)", got, want)
		}
		if p.Unreadable != 1 || p.Err != nil {
			t.Errorf("unreadable %d, err %v; want 1 (what is under /secret cannot be listed)", p.Unreadable, p.Err)
		}
	})
	t.Run("grep", func(t *testing.T) {
		p := run(SearchQuery{Root: "/", Data: regexp.MustCompile(`db1\.example|port=`)})
		if got, want := paths(p), []string{"/evil", "/db/host", "/web/db-url", "/web/host"}; !slices.Equal(got, want) {
			t.Errorf("hits = %v, want %v", got, want)
		}
		for _, h := range p.Hits {
			if h.Path == "/web/host" && h.Line != "port=8080" {
				t.Errorf("line of /web/host = %q, want the first matching line", h.Line)
			}
			if h.Path == "/evil" && h.Line != "db1.example␛[8m hidden" {
				t.Errorf("line of /evil = %q, want its ESC made inert", h.Line)
			}
		}
		if p.Unreadable != 1 {
			t.Errorf("unreadable = %d, want 1 (/secret denies READ)", p.Unreadable)
		}
		if p.Units < p.Visited {
			t.Errorf("%d units for %d nodes read: every read costs one", p.Units, p.Visited)
		}
	})
	// Depth first: what is under the first chunk of siblings is read
	// before the siblings after it, so that the nodes waiting to be read
	// stay near a chunk of listings per level. Read level by level, the
	// deep node came after every one of its parent's siblings.
	if _, err := admin.Create("/app/wide", nil, 0, world); err != nil {
		t.Fatal(err)
	}
	var wide []string
	for i := range searchChunk + 8 {
		n := fmt.Sprintf("/app/wide/c%02d", i)
		if _, err := admin.Create(n, nil, 0, world); err != nil {
			t.Fatal(err)
		}
		wide = append(wide, strings.TrimPrefix(n, "/app"))
	}
	if _, err := admin.Create("/app/wide/c00/deep", nil, 0, world); err != nil {
		t.Fatal(err)
	}
	t.Run("depth first", func(t *testing.T) {
		p := run(SearchQuery{Root: "/wide", Name: regexp.MustCompile(`deep$|/c(3[2-9]|4.)$`)})
		want := append([]string{"/wide/c00/deep"}, wide[searchChunk:]...)
		if got := paths(p); !slices.Equal(got, want) {
			t.Errorf("hits = %v, want %v (the deep node before the later siblings)", got, want)
		}
	})
	t.Run("max hits", func(t *testing.T) {
		p := run(SearchQuery{Root: "/", MaxHits: 2})
		if len(p.Hits) != 2 || !p.Truncated {
			t.Errorf("hits %d, truncated %v; want 2, true", len(p.Hits), p.Truncated)
		}
	})
}

// TestTreePacerShared: the walk and a search draw on one budget, each
// unit costing 1/DefaultWalkRate s whoever spends it, so two spenders together go
// no faster than one.
func TestTreePacerShared(t *testing.T) {
	var p treePacer
	t0 := time.Unix(1000, 0)
	unit := time.Second / DefaultWalkRate
	p.take(t0, 1)
	if got, want := p.take(t0, 1), 2*unit; got != want {
		t.Errorf("the walk's second request waits %v, want %v", got, want)
	}
	// A search asking at the same moment waits for both.
	if got, want := p.take(t0, 1), 3*unit; got != want {
		t.Errorf("a search's request beside it waits %v, want %v", got, want)
	}
}

// TestTreePacerFromFirstUnit: a start is paced from its first unit, request
// by request (issue 26, finding 9: the walk's first 100 units went at
// once, then chunks of 32 listings), and no budget piles up while idle.
func TestTreePacerFromFirstUnit(t *testing.T) {
	var p treePacer
	t0 := time.Unix(1000, 0)
	unit := time.Second / DefaultWalkRate
	for i := range 10 {
		if got, want := p.take(t0, 1), time.Duration(i+1)*unit; got != want {
			t.Fatalf("request %d of a start waits %v, want %v", i, got, want)
		}
	}
	// A listing's names are charged after it is read: the next request
	// waits for them too.
	t1 := t0.Add(time.Hour)
	p.take(t1, 0) // idle: the budget is back to paceSlack, no more
	p.take(t1, 1000.0/namesPerUnit)
	if got, want := p.take(t1, 1), time.Duration(1000/namesPerUnit+1-paceSlack)*unit; got != want {
		t.Errorf("the request after a 1,000-name listing waits %v, want %v", got, want)
	}
	// After an idle hour one request goes at once, the next waits its turn.
	t2 := t1.Add(time.Hour)
	if got := p.take(t2, 1); got != 0 {
		t.Errorf("the first request after an idle hour waits %v, want 0", got)
	}
	if got := p.take(t2, 1); got != unit {
		t.Errorf("the second request after an idle hour waits %v, want %v: the budget piled up while idle", got, unit)
	}
	// Clocks read by concurrent spenders may come in out of order.
	if got := p.take(t2.Add(-time.Millisecond), 1); got != 2*unit {
		t.Errorf("a request stamped a moment earlier waits %v, want %v", got, 2*unit)
	}
}

// TestWalkYieldsToSearch: while a search runs, the walk's requests wait
// (someone waits at the terminal for the hits, nobody for the walk), so a
// search beside the walk goes at the whole budget, not half of it; the
// walk goes on once the search ends or is stopped.
func TestWalkYieldsToSearch(t *testing.T) {
	var p treePacer
	done := p.searching()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	yielded := make(chan struct{})
	go func() {
		p.yield(ctx)
		close(yielded)
	}()
	select {
	case <-yielded:
		t.Fatal("the walk went on while a search ran")
	case <-time.After(3 * yieldPoll):
	}
	done()
	select {
	case <-yielded:
	case <-ctx.Done():
		t.Fatal("the walk never went on after the search ended")
	}
	// Without a search, no wait at all.
	p.yield(ctx)
}
