package server

// Routes lists the patterns of the route table, as registered.
func (s *Server) Routes() []string {
	out := make([]string, 0, len(s.table))
	for _, r := range s.table {
		out = append(out, r.Pattern)
	}
	return out
}

// TokenFrom exposes the token header parsing to the fuzz test.
var TokenFrom = tokenFrom

// FailureAddrs is how many client addresses the bad-token limiter holds.
func (s *Server) FailureAddrs() int { return s.failures.size() }

// OpenStreams is how many event and log streams are open.
func (s *Server) OpenStreams() int { return len(s.streams) }
