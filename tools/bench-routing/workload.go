package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// workloadParams: 48 shared documents of about 3k tokens with Zipf
// popularity (s=1: the top document draws 22% of requests), half of the
// requests in 4-turn sessions; open-loop Poisson arrivals.
type workloadParams struct {
	Docs         int
	DocTokens    int
	QuestionToks int
	AnswerToks   int
	// NoMaxTokens: requests carry no max_tokens (as many chat clients
	// send them); the engines answer AnswerToks tokens anyway.
	NoMaxTokens  bool
	Turns        int
	SessionShare float64 // share of requests that belong to sessions
	Think        time.Duration
	Rate         float64       // requests per second
	Warmup       time.Duration // arrivals before the measured window (not counted)
	Duration     time.Duration // arrivals in the measured window
	Seed         uint64
}

type workload struct {
	p    workloadParams
	docs []string
	cdf  []float64
}

func newWorkload(p workloadParams) *workload {
	r := rand.New(rand.NewPCG(p.Seed, 99))
	w := &workload{p: p}
	sum := 0.0
	for i := range p.Docs {
		n := p.DocTokens * bytesPerToken * (90 + r.IntN(21)) / 100
		w.docs = append(w.docs, fmt.Sprintf("document %d: ", i)+randText(r, n))
		sum += 1 / float64(i+1)
		w.cdf = append(w.cdf, sum)
	}
	for i := range w.cdf {
		w.cdf[i] /= sum
	}
	return w
}

func randText(r *rand.Rand, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		if r.IntN(6) == 0 {
			b[i] = ' '
		} else {
			b[i] = letters[r.IntN(len(letters))]
		}
	}
	return string(b)
}

func (w *workload) doc(r *rand.Rand) int {
	x := r.Float64()
	i, _ := slices.BinarySearch(w.cdf, x)
	return min(i, len(w.cdf)-1)
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// sample is one request's outcome.
type sample struct {
	ttft, total float64
	pod         string
	queueAtPod  int
	prompt      int
	cached      int
	err         bool
	session     int // -1: none
	turn        int
	prevPod     string
	prevHot     bool // the session's previous pod was queuing when this turn was sent
	start       float64
	doc         int
}

// writeSamples writes one JSON line per request (for looking into a cell:
// which requests went cold, where each session went).
func writeSamples(path string, samples []sample) error {
	var b bytes.Buffer
	for _, s := range samples {
		line, _ := json.Marshal(map[string]any{"start": s.start, "ttft": s.ttft, "pod": s.pod, "queue": s.queueAtPod, "prompt": s.prompt,
			"cached": s.cached, "err": s.err, "session": s.session, "turn": s.turn, "prevPod": s.prevPod, "prevHot": s.prevHot, "doc": s.doc})
		b.Write(line)
		b.WriteByte('\n')
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// runLoad drives the gateway at url for the duration and returns the
// samples. hot reports whether a pod (by name) is queuing right now.
func runLoad(ctx context.Context, w *workload, url string, hot func(pod string) bool) []sample {
	p := w.p
	r := rand.New(rand.NewPCG(p.Seed, 1))
	l := &loader{ctx: ctx, w: w, url: url, hot: hot, t0: time.Now(),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024, DisableCompression: true}, Timeout: 3 * time.Minute}}
	// Conversations arrive as a Poisson process: a single request, or a
	// session of Turns requests (each sent when the previous one is
	// answered, after a think time). SessionShare of requests are session
	// turns, so sessions start at rate*share/turns.
	convRate := p.Rate * ((1 - p.SessionShare) + p.SessionShare/float64(p.Turns))
	pSession := (p.SessionShare / float64(p.Turns)) / ((1 - p.SessionShare) + p.SessionShare/float64(p.Turns))
	next := 0.0
	conv := 0
	for {
		next += r.ExpFloat64() / convRate
		if next > (p.Warmup + p.Duration).Seconds() {
			break
		}
		if d := time.Until(l.t0.Add(time.Duration(next * float64(time.Second)))); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				l.wg.Wait()
				return l.out
			}
		}
		conv++
		doc := w.doc(r)
		isSession := r.Float64() < pSession
		seed := r.Uint64()
		l.wg.Add(1)
		go l.converse(conv, doc, isSession, seed)
	}
	l.wg.Wait()
	return l.out
}

// loader is one runLoad: where it sends, and the samples so far.
type loader struct {
	ctx    context.Context
	w      *workload
	url    string
	hot    func(pod string) bool
	client *http.Client
	t0     time.Time
	wg     sync.WaitGroup
	mu     sync.Mutex
	out    []sample
}

func (l *loader) record(s sample) {
	l.mu.Lock()
	l.out = append(l.out, s)
	l.mu.Unlock()
}

// converse is conversation conv on document doc: a single request, or a
// session of Turns requests, each sent when the previous one is answered,
// after a think time.
func (l *loader) converse(conv, doc int, isSession bool, seed uint64) {
	defer l.wg.Done()
	p := l.w.p
	cr := rand.New(rand.NewPCG(seed, 5))
	msgs := []message{{Role: "system", Content: l.w.docs[doc]}}
	turns, session := 1, -1
	if isSession {
		turns, session = p.Turns, conv
	}
	prev := ""
	for turn := range turns {
		msgs = append(msgs, message{Role: "user", Content: randText(cr, p.QuestionToks*bytesPerToken)})
		s, answer := l.send(msgs, doc, session, turn, prev)
		l.record(s)
		if s.err || turn == turns-1 || l.ctx.Err() != nil {
			return
		}
		prev = s.pod
		msgs = append(msgs, message{Role: "assistant", Content: answer})
		think := time.Duration(cr.ExpFloat64() * float64(p.Think))
		select {
		case <-time.After(think):
		case <-l.ctx.Done():
			return
		}
	}
}

// send sends one streamed chat request and times it; answer is the
// streamed content, the next turn's assistant message.
func (l *loader) send(msgs []message, doc, session, turn int, prevPod string) (s sample, answer string) {
	p := l.w.p
	fields := map[string]any{"model": "bench-model", "messages": msgs, "max_tokens": p.AnswerToks, "stream": true}
	if p.NoMaxTokens {
		delete(fields, "max_tokens")
	}
	body, _ := json.Marshal(fields)
	req, _ := http.NewRequestWithContext(l.ctx, http.MethodPost, l.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	s = sample{session: session, turn: turn, prevPod: prevPod, doc: doc}
	if session >= 0 {
		req.Header.Set("X-Session-Id", fmt.Sprint("s-", session))
		if prevPod != "" {
			s.prevHot = l.hot(prevPod)
		}
	}
	start := time.Now()
	s.start = start.Sub(l.t0).Seconds()
	resp, err := l.client.Do(req)
	if err != nil {
		s.err = true
		return s, ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		s.err = true
		return s, ""
	}
	answer = readStream(bufio.NewReader(resp.Body), start, &s)
	s.total = time.Since(start).Seconds()
	if s.pod == "" {
		s.err = true
	}
	return s, answer
}

// streamChunk is what the bench reads of a streamed chunk: the content,
// and on the last one the usage with the answering pod and its queue.
type streamChunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Pod   string `json:"x_pod"`
	Queue int    `json:"x_queue"`
}

// readStream reads a streamed answer to its end into s (the time to the
// first chunk, the usage and the pod) and returns its content.
func readStream(br *bufio.Reader, start time.Time, s *sample) string {
	var answer strings.Builder
	first := true
	for {
		line, err := br.ReadString('\n')
		if strings.HasPrefix(line, "data: {") {
			if first {
				s.ttft = time.Since(start).Seconds()
				first = false
			}
			var ch streamChunk
			if json.Unmarshal([]byte(line[len("data: "):]), &ch) == nil {
				for _, c := range ch.Choices {
					answer.WriteString(c.Delta.Content)
				}
				if ch.Usage != nil {
					s.prompt, s.cached = ch.Usage.PromptTokens, ch.Usage.PromptTokensDetails.CachedTokens
					s.pod, s.queueAtPod = ch.Pod, ch.Queue
				}
			}
		}
		if err != nil {
			return answer.String()
		}
	}
}

// result is one (load, picker) cell.
type result struct {
	Load       string  `json:"load"`
	Rate       float64 `json:"rate"`
	Picker     string  `json:"picker"`
	Seed       uint64  `json:"seed"`
	Requests   int     `json:"requests"`
	Errors     int     `json:"errors"`
	TTFTP50    float64 `json:"ttftP50"`
	TTFTP90    float64 `json:"ttftP90"`
	TTFTP99    float64 `json:"ttftP99"`
	Throughput float64 `json:"reqPerSec"`
	HitRate    float64 `json:"hitRate"`
	Busiest    float64 `json:"busiestOverMean"`
	Sticky     float64 `json:"stickiness"`
	StickyCool float64 `json:"stickinessNotHot"`
	HotTurns   int     `json:"hotTurns"`
	Cold       int     `json:"coldRequests"` // less than half the prompt cached
	// ColdSeen: cold requests whose document had been sent on the same
	// pod before (the fleet had it; the picker lost it or went elsewhere).
	ColdSeen int `json:"coldSeenOnPod"`
	// ColdFirst: cold requests whose document was new to the fleet.
	ColdFirst int `json:"coldFirst"`
	// ColdTurn: cold later turns of sessions (the session left its pod).
	ColdTurn    int     `json:"coldTurn"`
	MaxQueue    int     `json:"maxQueue"`
	WallSeconds float64 `json:"wallSeconds"`
}

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// summarize reports the samples sent from warmup on.
// req/s counts the answers that completed within the measured window.
func summarize(samples []sample, pods []string, warmup, window, wall float64) result {
	var res result
	res.ColdFirst, res.ColdSeen = coldCauses(samples, warmup)
	served := 0
	for _, s := range samples {
		if end := s.start + s.total; !s.err && end >= warmup && end < warmup+window {
			served++
		}
	}
	res.Throughput = float64(served) / window
	t := tally{perPod: map[string]int{}}
	for _, s := range samples {
		if s.start >= warmup {
			t.add(s, &res)
		}
	}
	ttfts := t.ttfts
	res.TTFTP50, res.TTFTP90, res.TTFTP99 = quantile(ttfts, 0.5), quantile(ttfts, 0.9), quantile(ttfts, 0.99)
	if t.prompt > 0 {
		res.HitRate = float64(t.cached) / float64(t.prompt)
	}
	if n := len(ttfts); n > 0 {
		mean := float64(n) / float64(len(pods))
		busiest := 0
		for _, c := range t.perPod {
			busiest = max(busiest, c)
		}
		res.Busiest = float64(busiest) / mean
	}
	if t.stickyOf > 0 {
		res.Sticky = float64(t.sticky) / float64(t.stickyOf)
	}
	if t.coolOf > 0 {
		res.StickyCool = float64(t.cool) / float64(t.coolOf)
	}
	res.WallSeconds = wall
	return res
}

// coldCauses counts the cold requests after warmup (under half the prompt
// cached) whose document no pod had been sent before (first), and those
// sent to a pod that had been sent their document before (seen: evicted).
func coldCauses(samples []sample, warmup float64) (first, seen int) {
	// Which documents each pod was sent, in order of sending.
	sorted := slices.Clone(samples)
	slices.SortFunc(sorted, func(a, b sample) int {
		if a.start < b.start {
			return -1
		}
		if a.start > b.start {
			return 1
		}
		return 0
	})
	docSeen := map[int]bool{}
	podDoc := map[string]bool{}
	for _, s := range sorted {
		if s.err {
			continue
		}
		if s.start >= warmup && 2*s.cached < s.prompt {
			if !docSeen[s.doc] {
				first++
			} else if podDoc[fmt.Sprint(s.pod, "/", s.doc)] {
				seen++
			}
		}
		docSeen[s.doc] = true
		podDoc[fmt.Sprint(s.pod, "/", s.doc)] = true
	}
	return first, seen
}

// tally is the sums over the measured requests that summarize turns into
// rates.
type tally struct {
	ttfts                          []float64
	perPod                         map[string]int
	prompt, cached                 int
	sticky, stickyOf, cool, coolOf int
}

// add counts one measured request into t and res.
func (t *tally) add(s sample, res *result) {
	res.Requests++
	if s.err {
		res.Errors++
		return
	}
	t.ttfts = append(t.ttfts, s.ttft)
	t.perPod[s.pod]++
	t.prompt += s.prompt
	t.cached += s.cached
	if 2*s.cached < s.prompt {
		res.Cold++
		if s.turn > 0 {
			res.ColdTurn++
		}
	}
	if s.session < 0 || s.turn == 0 || s.prevPod == "" {
		return
	}
	t.stickyOf++
	same := s.pod == s.prevPod
	if same {
		t.sticky++
	}
	if s.prevHot {
		res.HotTurns++
		return
	}
	t.coolOf++
	if same {
		t.cool++
	}
}
