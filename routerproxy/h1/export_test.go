package h1

// IdleConns is how many connections wait for their next request, as the
// server sees them. A connection turns idle after its response is written,
// so a client can read its answer before the server counts it idle: a test
// of which idle connection gives up its slot waits for this first.
func IdleConns(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if c.state.Load() == stateIdle {
			n++
		}
	}
	return n
}
