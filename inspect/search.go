package inspect

import (
	"bytes"
	"context"
	"errors"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"

	"github.com/zkherd/zkherd/internal/inert"
)

// DefaultMaxHits bounds the hits a search keeps: past it the search stops
// and says so.
const DefaultMaxHits = 1000

// SearchQuery is a search of the tree, as zk-shell's find (Name) and grep
// (Data): the nodes at or under Root whose path matches Name and whose data
// matches Data (either may be nil: a nil regexp matches everything).
type SearchQuery struct {
	Root       string
	Name, Data *regexp.Regexp
	// MaxHits defaults to DefaultMaxHits.
	MaxHits int
}

// SearchHit is one node found.
type SearchHit struct {
	Path string
	// Line is the first line of the data that Data matched, made inert as
	// the Tree's data lines are; empty for a name search.
	Line string
}

// SearchProgress is where a search is. Hits is everything found so far
// (each progress extends the last one's).
type SearchProgress struct {
	Query   SearchQuery
	Hits    []SearchHit
	Visited int // nodes read
	Units   int // cost units spent (walkUnits)
	// Unreadable counts nodes whose ACL denied this session: neither
	// their data nor what is under them was searched.
	Unreadable int
	Done       bool
	Truncated  bool  // stopped at MaxHits
	Err        error // why it stopped early (the session was lost)
}

// searchChunk is how many nodes a search reads before it reports.
const searchChunk = walkChunk

// Search reads the tree under q.Root depth first, searchChunk siblings at
// a time, and sends its progress on the returned channel after every
// chunk, until it is done or ctx ends; the channel is closed after the
// last progress.
//
// Memory: the nodes still to read are held as a stack, at most about
// searchChunk listings per level of depth. It read level by level and
// held the next level whole: on BenchmarkInspectorCost's tree the
// inspector's RSS stepped up 17 MiB when the search queued the fourth
// level (194,000 paths), about 90 MB per million nodes of a tree's widest
// level (docs/BENCHMARKS.md).
//
// Cost: a name search lists every node once (a getChildren each, leaves
// included: nothing else tells a leaf from a directory); a data search
// reads every node's data (a getData each) and lists only the nodes whose
// stat says they have children. Both spend the walk's budget (treePacer),
// request by request: at most the walk rate's units a second, the walk
// yielding to the searches meanwhile, so on the 205,000-znode tree of
// BenchmarkInspectorCost a name search of the whole tree takes about
// 205,000 / 20 s (near three hours), and a narrower root (":find /app
// ...") is how to make it quick.
func (in *Inspector) Search(ctx context.Context, q SearchQuery) <-chan SearchProgress {
	out := make(chan SearchProgress)
	go func() {
		defer close(out)
		in.search(ctx, q, func(p SearchProgress) bool {
			select {
			case out <- p:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	return out
}

func (in *Inspector) search(ctx context.Context, q SearchQuery, report func(SearchProgress) bool) {
	defer in.pacer.searching()() // the walk yields meanwhile (treePacer.yield)
	p := SearchProgress{Query: q}
	maxHits := q.MaxHits
	if maxHits <= 0 {
		maxHits = DefaultMaxHits
	}
	c, err := in.conn(ctx)
	if err != nil {
		p.Err, p.Done = err, true
		report(p)
		return
	}
	root := in.abs(q.Root)
	var cost Cost
	// The nodes to read, the next on top (the end): each chunk's children
	// are pushed in reverse, so that they are read in order, before the
	// chunk's later siblings. Names are matched when a node is first
	// seen (the root, or a child in its parent's listing).
	pending := []string{root}
	matchName := func(abs string) bool {
		if q.Name == nil {
			return true
		}
		rel, ok := in.rel(abs)
		return ok && q.Name.MatchString(rel)
	}
	type read struct {
		node string
		kids []string
		hit  bool
		line string
		err  error
	}
	for len(pending) > 0 {
		if ctx.Err() != nil {
			return
		}
		top := len(pending) - min(searchChunk, len(pending))
		chunk := slices.Clone(pending[top:])
		slices.Reverse(chunk)
		pending = pending[:top]
		var kids []string
		var mu sync.Mutex
		results := pipelinedN(ctx, walkDepth, chunk, func(node string) read {
			r := read{node: node}
			list := true
			if q.Data != nil {
				if in.pacer.request(ctx); ctx.Err() != nil {
					r.err = ctx.Err()
					return r
				}
				data, stat, err := c.Get(node)
				mu.Lock()
				cost.Stats++ // one small request, as an exists
				mu.Unlock()
				if err != nil {
					r.err = err
					return r
				}
				if loc := q.Data.FindIndex(data); loc != nil && matchName(node) {
					r.hit, r.line = true, lineAt(data, loc[0])
				}
				list = stat.NumChildren > 0
			} else {
				r.hit = matchName(node)
			}
			if !list || node == "/zookeeper" && root != "/zookeeper" {
				return r
			}
			if in.pacer.request(ctx); ctx.Err() != nil {
				r.err = ctx.Err()
				return r
			}
			names, _, err := c.Children(node)
			in.pacer.names(len(names))
			mu.Lock()
			cost.Lists++
			cost.Names += len(names)
			mu.Unlock()
			if err != nil {
				r.err = err
				return r
			}
			for _, n := range names {
				r.kids = append(r.kids, path.Join(node, n))
			}
			return r
		})
		if ctx.Err() != nil {
			return // stopped: a request cut short is no error to show
		}
		// Results come back in no order: keep the hits in the order the
		// parents listed them.
		slices.SortFunc(results, func(a, b read) int { return strings.Compare(a.node, b.node) })
		for _, r := range results {
			p.Visited++
			if r.hit {
				rel, _ := in.rel(r.node)
				// Made inert here, at the inspector's exit, once: the
				// hits are shared by every progress sent.
				hit := SearchHit{Path: inert.String(rel)}
				if r.line != "" {
					hit.Line = shownLines([]string{r.line})[0]
				}
				p.Hits = append(p.Hits, hit)
				if len(p.Hits) >= maxHits {
					p.Truncated, p.Done = true, true
					p.Units = walkUnits(cost)
					report(p)
					return
				}
			}
			switch {
			case errors.Is(r.err, zk.ErrNoAuth):
				p.Unreadable++
				continue
			case errors.Is(r.err, zk.ErrNoNode):
				continue // deleted meanwhile
			case r.err != nil:
				p.Err, p.Done = wrapErr("search", q.Root, r.err), true
				report(p)
				return
			}
			kids = append(kids, r.kids...)
		}
		slices.Sort(kids) // the servers list children in no order
		slices.Reverse(kids)
		pending = append(pending, kids...)
		p.Units = walkUnits(cost)
		if !report(p) {
			return
		}
	}
	p.Done = true
	report(p)
}

// lineAt is the line of data holding byte i, at most 200 bytes of it.
func lineAt(data []byte, i int) string {
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	end := len(data)
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		end = i + j
	}
	if end-start > 200 {
		start = max(start, i-100)
		end = min(end, start+200)
	}
	return string(data[start:end])
}
