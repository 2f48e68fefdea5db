// Command slowclients attacks an HTTP server's /metrics on loopback with
// slow clients while a well-behaved scraper scrapes it beside them, and
// prints how the scraper fared (bench/serve/slowclients.sh; issue 37).
//
//	slowclients -url http://127.0.0.1:9427/metrics -attack pipeline -clients 64 -addrs 1
//
// Attacks: pipeline (pipelined requests, never read), idle (one request,
// then the connection held idle), silent (connect, send nothing). An
// attacker that is cut off comes back after 1 s. Attackers use source
// addresses 127.0.0.2 (addrs 1) or 127.0.1.1 … 127.0.1.N; the scraper
// 127.0.0.1. Only loopback addresses are used.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	target := flag.String("url", "", "the /metrics URL (loopback)")
	attack := flag.String("attack", "pipeline", "pipeline, idle or silent")
	clients := flag.Int("clients", 64, "attackers")
	addrs := flag.Int("addrs", 1, "source addresses the attackers spread over")
	scrapes := flag.Int("scrapes", 40, "scrapes, 50 ms apart")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil || !net.ParseIP(u.Hostname()).IsLoopback() {
		fmt.Fprintln(os.Stderr, "slowclients: -url must be an http URL on a loopback address")
		os.Exit(2)
	}
	run := map[string]func(context.Context, *net.Dialer, string, string){"pipeline": pipeline, "idle": idle, "silent": silent}[*attack]
	if run == nil {
		fmt.Fprintln(os.Stderr, "slowclients: -attack pipeline, idle or silent")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	var wg sync.WaitGroup
	for i := range *clients {
		src := "127.0.0.2"
		if *addrs > 1 {
			src = fmt.Sprintf("127.0.1.%d", 1+i%*addrs)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(ctx, dialer(src, true), u.Host, u.RequestURI())
		}()
	}
	time.Sleep(500 * time.Millisecond)
	ok, lat := scrape(*target, *scrapes)
	cancel()
	wg.Wait()
	slices.Sort(lat)
	p99 := time.Duration(0)
	if len(lat) > 0 {
		p99 = lat[(99*len(lat)+99)/100-1]
	}
	fmt.Printf("%d %d %.1f\n", ok, *scrapes, float64(p99)/float64(time.Millisecond))
}

func dialer(src string, small bool) *net.Dialer {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	if small {
		d.Control = func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		}
	}
	return d
}

// scrape scrapes n times from 127.0.0.1 with keep-alive and a 3 s timeout;
// it returns the successes and their latencies.
func scrape(target string, n int) (int, []time.Duration) {
	tr := &http.Transport{DialContext: dialer("127.0.0.1", false).DialContext, MaxIdleConnsPerHost: 1}
	c := &http.Client{Transport: tr, Timeout: 3 * time.Second}
	ok := 0
	var lat []time.Duration
	for range n {
		t0 := time.Now()
		resp, err := c.Get(target)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode == 200 {
				ok++
				lat = append(lat, time.Since(t0))
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return ok, lat
}

func pipeline(ctx context.Context, d *net.Dialer, host, path string) {
	reqs := []byte(strings.Repeat("GET "+path+" HTTP/1.1\r\nHost: "+host+"\r\n\r\n", 100))
	for ctx.Err() == nil {
		c, err := d.DialContext(ctx, "tcp", host)
		if err == nil {
			for ctx.Err() == nil {
				c.SetWriteDeadline(time.Now().Add(time.Second))
				if _, err := c.Write(reqs); err != nil {
					break
				}
				pause(ctx, 100*time.Millisecond)
			}
			c.Close()
		}
		pause(ctx, time.Second)
	}
}

func idle(ctx context.Context, d *net.Dialer, host, path string) {
	for ctx.Err() == nil {
		if c, err := d.DialContext(ctx, "tcp", host); err == nil {
			r := bufio.NewReader(c)
			if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); err == nil {
				if resp, err := http.ReadResponse(r, nil); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
			hold(ctx, c, r)
		}
		pause(ctx, time.Second)
	}
}

func silent(ctx context.Context, d *net.Dialer, host, _ string) {
	for ctx.Err() == nil {
		if c, err := d.DialContext(ctx, "tcp", host); err == nil {
			hold(ctx, c, bufio.NewReader(c))
		}
		pause(ctx, time.Second)
	}
}

func hold(ctx context.Context, c net.Conn, r *bufio.Reader) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	io.Copy(io.Discard, r)
	c.Close()
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
