package bw

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/linecheck/linecheck/probe"
)

// The control-connection states of the iperf3 protocol: one signed byte
// each, sent by whichever side moves the test on.
const (
	stTestStart      int8 = 1
	stTestRunning    int8 = 2
	stTestEnd        int8 = 4
	stParamExchange  int8 = 9
	stCreateStreams  int8 = 10
	stServerTerm     int8 = 11
	stClientTerm     int8 = 12
	stExchangeResult int8 = 13
	stDisplayResult  int8 = 14
	stIperfStart     int8 = 15
	stIperfDone      int8 = 16
	stAccessDenied   int8 = -1
	stServerError    int8 = -2
)

var stateNames = map[int8]string{
	stTestStart: "TEST_START", stTestRunning: "TEST_RUNNING", 3: "RESULT_REQUEST", stTestEnd: "TEST_END",
	5: "STREAM_BEGIN", 6: "STREAM_RUNNING", 7: "STREAM_END", 8: "ALL_STREAMS_END",
	stParamExchange: "PARAM_EXCHANGE", stCreateStreams: "CREATE_STREAMS", stServerTerm: "SERVER_TERMINATE",
	stClientTerm: "CLIENT_TERMINATE", stExchangeResult: "EXCHANGE_RESULTS", stDisplayResult: "DISPLAY_RESULTS",
	stIperfStart: "IPERF_START", stIperfDone: "IPERF_DONE", stAccessDenied: "ACCESS_DENIED", stServerError: "SERVER_ERROR",
}

func stateName(s int8) string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("unknown state %d (byte 0x%02x)", s, uint8(s))
}

// cookieLen is the test cookie: 36 characters of a base-32 alphabet and a NUL.
// The client sends it first on the control connection and again on every
// TCP data connection, which is how the server tells the streams of its test
// from strangers.
const cookieLen = 37

const cookieAlphabet = "abcdefghijklmnopqrstuvwxyz234567"

func newCookie() [cookieLen]byte {
	var c [cookieLen]byte
	var r [cookieLen - 1]byte
	_, _ = rand.Read(r[:])
	for i, b := range r {
		c[i] = cookieAlphabet[int(b)%len(cookieAlphabet)]
	}
	return c
}

// The UDP stream greeting: the client's first datagram on a UDP stream and
// the server's answer, 4 bytes in host order. iperf3 before 3.17 sent the
// numbers 123456789 and 987654321 and never checked the content, so any
// 4 bytes are accepted both ways.
const (
	udpConnectMsg   uint32 = 0x36373839
	udpConnectReply uint32 = 0x39383736
)

// maxJSON bounds a JSON message on the control connection: the server's
// results carry at most a few hundred streams (and, when asked for, its text
// output); anything larger is not iperf3.
const maxJSON = 8 << 20

// writeJSON sends v as iperf3 does: a 4-byte big-endian length, then the text.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	buf := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	copy(buf[4:], b)
	_, err = w.Write(buf)
	return err
}

// readJSON reads one length-prefixed JSON message into v.
func readJSON(r io.Reader, v any) error {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > maxJSON {
		return fmt.Errorf("%w: a JSON message of %d bytes", ErrProtocol, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		// encoding/json quotes what it shows of the text, but a number
		// literal is shown whole: a 2 MB one would be a 2 MB log line.
		return fmt.Errorf("%w: %s", ErrProtocol, cutText(err.Error(), 200))
	}
	return nil
}

// maxPeerText is the most of a peer-supplied string (a client's
// client_version) that is shown.
const maxPeerText = 64

// PeerText makes a string the peer sent fit to print or log: cut to 64
// bytes (saying how long it was) and quoted with every control character,
// escape sequence and non-ASCII rune escaped, so that a client cannot
// retitle or clear the terminal, or flood the log, with what it sends.
func PeerText(s string) string {
	if len(s) <= maxPeerText {
		return strconv.QuoteToASCII(s)
	}
	return strconv.QuoteToASCII(cutText(s, maxPeerText)) + fmt.Sprintf("... (%d bytes)", len(s))
}

// cutText is s cut to at most n bytes, on a rune boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// params is the test description the client sends at PARAM_EXCHANGE. Keys
// are iperf3's; a server ignores the ones it does not know.
type params struct {
	TCP           bool    `json:"tcp,omitempty"`
	UDP           bool    `json:"udp,omitempty"`
	Omit          float64 `json:"omit"`
	Time          float64 `json:"time"`
	Num           int64   `json:"num"`
	Blockcount    int64   `json:"blockcount"`
	Parallel      int     `json:"parallel"`
	Reverse       bool    `json:"reverse,omitempty"`
	Bidir         bool    `json:"bidirectional,omitempty"`
	Len           int     `json:"len"`
	Bandwidth     float64 `json:"bandwidth,omitempty"` // bits per second per stream; 0 = unlimited
	PacingTimer   int     `json:"pacing_timer,omitempty"`
	Counters64    bool    `json:"udp_counters_64bit,omitempty"`
	ClientVersion string  `json:"client_version,omitempty"`
}

// peerResults is what each side sends the other at EXCHANGE_RESULTS.
// Numbers are float64 because iperf3 writes -1 as 2^64-1 in some fields.
type peerResults struct {
	CPUTotal             float64        `json:"cpu_util_total"`
	CPUUser              float64        `json:"cpu_util_user"`
	CPUSystem            float64        `json:"cpu_util_system"`
	SenderHasRetransmits float64        `json:"sender_has_retransmits"`
	Congestion           string         `json:"congestion_used,omitempty"`
	Streams              []streamResult `json:"streams"`
}

// streamResult is one stream in peerResults, from the sending side's view:
// bytes sent or received, and for UDP the packet count (sender: sent;
// receiver: highest sequence seen), errors (receiver: sequence gaps) and
// jitter in seconds.
type streamResult struct {
	ID             int      `json:"id"`
	Bytes          float64  `json:"bytes"`
	Retransmits    float64  `json:"retransmits"`
	Jitter         float64  `json:"jitter"`
	Errors         float64  `json:"errors"`
	OmittedErrors  *float64 `json:"omitted_errors,omitempty"` // iperf3 3.13 and later
	Packets        float64  `json:"packets"`
	OmittedPackets *float64 `json:"omitted_packets,omitempty"` // iperf3 3.13 and later
	StartTime      float64  `json:"start_time"`
	EndTime        float64  `json:"end_time"`
}

// validCount reads an iperf3 counter: -1 (written as -1 or as 2^64-1) and
// anything not a finite non-negative number means "not known".
func validCount(v float64) (int64, bool) {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v >= 1<<62 {
		return 0, false
	}
	return int64(v), true
}

// Errors that callers can test with errors.Is. Each error returned by Run
// wraps one of these and says in words what to do.
var (
	// ErrBusy: the server is running another client's test (iperf3 serves
	// one test at a time) and answered ACCESS_DENIED.
	ErrBusy = errors.New("server busy")
	// ErrRefused: nothing listens on the port (TCP RST).
	ErrRefused = errors.New("connection refused")
	// ErrUnreachable: no answer at all within the connect timeout, or no
	// route: a firewall drops the port, or the address is wrong.
	ErrUnreachable = errors.New("no answer")
	// ErrProtocol: the peer does not speak the iperf3 protocol as we know
	// it (another program on the port, iperf 2, an unknown state).
	ErrProtocol = errors.New("not the iperf3 protocol")
	// ErrServer: the server reported an error (SERVER_ERROR) or stopped
	// (SERVER_TERMINATE).
	ErrServer = errors.New("server error")
	// ErrCutShort: the test started but did not finish (a connection was
	// reset or closed mid-test, or the results never came).
	ErrCutShort = errors.New("test cut short")
	// ErrDocumentation: the server is a documentation address (RFC 5737,
	// RFC 3849), illustrative only; probe's safety gate refuses it before
	// any socket opens. It is probe.ErrDocumentation.
	ErrDocumentation = probe.ErrDocumentation
	// ErrNoClient is what a server's OnResult gets for a connection that
	// never sent its cookie (a port scan, a TCP ping of the port, a client
	// that gave up): no test was attempted.
	ErrNoClient = errors.New("no cookie")
)

// denied is ACCESS_DENIED (-1) as the byte on the wire.
const denied byte = 0xff
