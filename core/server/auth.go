package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

// access is who may call a route.
type access int

const (
	// byMethod: any role may GET; writing needs member or admin.
	byMethod access = iota
	// public: no token (the versions document and the health check).
	public
	// adminOnly: tokens and project grants, the agent's logs, the profiler.
	adminOnly
	// operator: an admin, or any token of project "default", the
	// operator's: the metrics, which count every project's objects.
	operator
)

// route is one entry of the route table, kept so tests can check that
// every route has its access tested.
type route struct {
	Pattern string
	Access  access
}

// tokenFrom reads the token a request carries: X-Auth-Token (Senlin's
// clients) or Authorization: Bearer. present is false when it carries
// neither. A header that is there but malformed (two values, another
// Authorization scheme, both headers disagreeing) yields present and an
// empty secret, which no token matches: a request that tried to
// authenticate is never treated as one that did not.
func tokenFrom(h http.Header) (secret string, present bool) {
	xs, as := h.Values("X-Auth-Token"), h.Values("Authorization")
	if len(xs) == 0 && len(as) == 0 {
		return "", false
	}
	if len(xs) > 1 || len(as) > 1 {
		return "", true
	}
	var x, a string
	if len(xs) == 1 {
		x = strings.TrimSpace(xs[0])
	}
	if len(as) == 1 {
		scheme, rest, ok := strings.Cut(strings.TrimSpace(as[0]), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", true
		}
		a = strings.TrimSpace(rest)
	}
	switch {
	case len(xs) == 1 && len(as) == 1 && x != a:
		return "", true
	case len(xs) == 1:
		return x, true
	}
	return a, true
}

// loopback reports whether the request's peer is a loopback address. It is
// the connection's address, never a header: X-Forwarded-For is the client's
// to write.
func loopback(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// clientKey is the address a request's failures are counted against.
func clientKey(r *http.Request) string {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap().String()
	}
	return r.RemoteAddr
}

// authenticate resolves the caller of a request, or answers it (401, 429)
// and returns false.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (engine.Caller, bool) {
	secret, present := tokenFrom(r.Header)
	if !present {
		if s.opts.Dev && loopback(r) {
			return engine.Caller{User: "dev", Project: model.DefaultProject, Role: model.RoleAdmin}, true
		}
		s.unauthorized(w, engine.Unauthorized("A token is required: send it as X-Auth-Token or Authorization: Bearer."))
		return engine.Caller{}, false
	}
	key := clientKey(r)
	if wait := s.failures.blocked(key, time.Now()); wait > 0 {
		s.tooMany(w, wait)
		return engine.Caller{}, false
	}
	if s.adminHash != nil {
		sum := sha256.Sum256([]byte(secret))
		// Compared as hashes, in constant time: the comparison's duration
		// says nothing about how much of a guess was right.
		if subtle.ConstantTimeCompare(sum[:], s.adminHash) == 1 {
			return engine.Caller{User: "admin_token", Project: s.opts.Project, Role: model.RoleAdmin}, true
		}
	}
	st := s.s
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		st = s.r
	}
	c, err := s.e.AuthenticateFrom(r.Context(), st, secret)
	if err != nil {
		if status, _ := engine.HTTPStatus(err); status == http.StatusUnauthorized {
			s.failures.fail(key, time.Now())
			s.unauthorized(w, err)
		} else {
			s.fail(w, err)
		}
		return engine.Caller{}, false
	}
	return c, true
}

func (s *Server) unauthorized(w http.ResponseWriter, err error) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="grove"`)
	s.fail(w, err)
}

func (s *Server) tooMany(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
	s.writeError(w, http.StatusTooManyRequests, "TooManyRequests",
		"Too many requests with invalid tokens came from this address; wait before trying again.")
}

// authorize checks the caller's role against the route's access.
func authorize(a access, method string, c engine.Caller) error {
	switch {
	case a == adminOnly && !c.IsAdmin():
		return engine.Forbidden("Only an admin may manage tokens and project grants, list services, read the agent's logs or profile it; this token's role is %s.", c.Role)
	case a == operator && !c.IsAdmin() && c.Project != model.DefaultProject:
		return engine.Forbidden("The metrics count every project's objects: only an admin, or a token of project %s (a reader is enough), may read them; this token is a %s of project %s.",
			model.DefaultProject, c.Role, c.Project)
	case a == byMethod && method != http.MethodGet && method != http.MethodHead && c.Role == model.RoleReader:
		return engine.Forbidden("A reader may only read; this request needs the member or admin role in project %q.", c.Project)
	}
	return nil
}

// failures rate-limits requests with bad tokens per client address: each
// bad token spends one of a burst that refills slowly, and an address with
// none left is answered 429 without its token being checked, so guessing
// is slow. Addresses are forgotten once their limiter is full again, and at
// most maxAddrs are kept: a flood of addresses cannot grow memory.
type failures struct {
	mu       sync.Mutex
	every    rate.Limit
	burst    int
	maxAddrs int
	addrs    map[string]*failEntry
}

type failEntry struct {
	lim  *rate.Limiter
	last time.Time
}

func newFailures(every time.Duration, burst, maxAddrs int) *failures {
	return &failures{every: rate.Every(every), burst: burst, maxAddrs: maxAddrs, addrs: map[string]*failEntry{}}
}

// blocked returns how long the address must wait, or 0.
func (f *failures) blocked(key string, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.addrs[key]
	if !ok {
		return 0
	}
	tokens := e.lim.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return max(time.Second, time.Duration((1-tokens)/float64(f.every)*float64(time.Second)))
}

// fail spends one of the address's allowance.
func (f *failures) fail(key string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.addrs[key]
	if !ok {
		if len(f.addrs) >= f.maxAddrs {
			f.evict(now)
		}
		e = &failEntry{lim: rate.NewLimiter(f.every, f.burst)}
		f.addrs[key] = e
	}
	e.last = now
	e.lim.AllowN(now, 1)
}

// evict forgets the addresses whose allowance has refilled, and if none
// has, the one that failed longest ago.
func (f *failures) evict(now time.Time) {
	var oldest string
	for k, e := range f.addrs {
		if e.lim.TokensAt(now) >= float64(f.burst) {
			delete(f.addrs, k)
			continue
		}
		if oldest == "" || e.last.Before(f.addrs[oldest].last) {
			oldest = k
		}
	}
	if len(f.addrs) >= f.maxAddrs && oldest != "" {
		delete(f.addrs, oldest)
	}
}

// size is how many addresses are remembered.
func (f *failures) size() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.addrs)
}
