package main

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/route"
)

// reverseFunc looks up the names of an address (net.Resolver.LookupAddr).
type reverseFunc func(ctx context.Context, addr string) ([]string, error)

type reverseKey struct{}

// reverseFrom returns the reverse resolver a test put into ctx, or the system's.
func reverseFrom(ctx context.Context) reverseFunc {
	if ctx != nil {
		if f, ok := ctx.Value(reverseKey{}).(reverseFunc); ok {
			return f
		}
	}
	return net.DefaultResolver.LookupAddr
}

// rdnsWait bounds the time all reverse lookups of one table may take: a
// slow resolver costs a name, never the report.
const rdnsWait = 2 * time.Second

// nameCache keeps the reverse names looked up in this process (one per
// address, failures too), so a table never asks twice.
var nameCache struct {
	sync.Mutex
	m map[string]string
}

// hopNames looks up the reverse DNS name of every responder of tr, at most
// 8 at a time and all within rdnsWait; addresses without a name are left
// out of the map.
func hopNames(ctx context.Context, tr *route.Trace, lookup reverseFunc) map[string]string {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, rdnsWait)
	defer cancel()
	nameCache.Lock()
	if nameCache.m == nil {
		nameCache.m = map[string]string{}
	}
	nameCache.Unlock()
	var todo []string
	seen := map[string]bool{}
	for _, h := range tr.Hops {
		for _, r := range h.Responders {
			if r.Addr != "" && !seen[r.Addr] {
				seen[r.Addr] = true
				todo = append(todo, r.Addr)
			}
		}
	}
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, a := range todo {
		nameCache.Lock()
		_, cached := nameCache.m[a]
		nameCache.Unlock()
		if cached {
			continue
		}
		wg.Add(1)
		go func(a string) {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			names, err := lookup(ctx, a)
			name := ""
			if err == nil && len(names) > 0 {
				name = strings.TrimSuffix(names[0], ".")
			}
			if err != nil && ctx.Err() != nil {
				return // timed out: not cached, a later table may try again
			}
			nameCache.Lock()
			nameCache.m[a] = name
			nameCache.Unlock()
		}(a)
	}
	wg.Wait()
	out := map[string]string{}
	nameCache.Lock()
	defer nameCache.Unlock()
	for _, a := range todo {
		if n := nameCache.m[a]; n != "" && n != a {
			out[a] = n
		}
	}
	return out
}

// tableOptions fits text tables to the terminal w writes to, else to
// report.DefaultWidth columns; --wide lifts the limit.
func tableOptions(w io.Writer, wide bool) report.Options {
	return report.Options{Width: termWidth(w), Wide: wide}
}

// termWidth is the width of the terminal w writes to, or report.DefaultWidth.
func termWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col >= 40 {
			return int(ws.Col)
		}
	}
	return report.DefaultWidth
}
