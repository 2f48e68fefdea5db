package main

import (
	"context"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/linecheck/linecheck/internal/rdns"
	"github.com/linecheck/linecheck/internal/report"
	"github.com/linecheck/linecheck/internal/route"
)

type reverseKey struct{}

// reverseFrom returns the reverse resolver a test put into ctx, or the system's.
func reverseFrom(ctx context.Context) rdns.Resolver {
	if ctx != nil {
		if f, ok := ctx.Value(reverseKey{}).(rdns.Resolver); ok {
			return f
		}
	}
	return rdns.System()
}

// rdnsWait bounds the time all reverse lookups of one table may take: a
// slow resolver costs a name, never the report.
const rdnsWait = 2 * time.Second

// hopNames looks up the reverse DNS name of every responder of tr through
// names, all within rdnsWait; addresses without a name are left out.
func hopNames(ctx context.Context, tr *route.Trace, names *rdns.Cache) map[string]string {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, rdnsWait)
	defer cancel()
	var addrs []string
	seen := map[string]bool{}
	for _, h := range tr.Hops {
		for _, r := range h.Responders {
			if r.Addr != "" && !seen[r.Addr] {
				seen[r.Addr] = true
				addrs = append(addrs, r.Addr)
			}
		}
	}
	return names.Wait(ctx, addrs)
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
