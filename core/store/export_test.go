package store

// CachedStmts is how many statements the read pool keeps prepared.
func (s *SQL) CachedStmts() int {
	if s.reads == nil {
		return 0
	}
	s.reads.stmts.mu.Lock()
	defer s.reads.stmts.mu.Unlock()
	return len(s.reads.stmts.stmts)
}

// MaxCachedStmts is maxCachedStmts.
const MaxCachedStmts = maxCachedStmts

// CachedWriteStmts is how many statements the writer keeps prepared.
func (s *SQL) CachedWriteStmts() int {
	if s.stmts == nil {
		return 0
	}
	s.stmts.mu.Lock()
	defer s.stmts.mu.Unlock()
	return len(s.stmts.stmts)
}

// CachedWriteText is the length of the texts the writer keeps prepared.
func (s *SQL) CachedWriteText() int {
	s.stmts.mu.Lock()
	defer s.stmts.mu.Unlock()
	return s.stmts.text
}

// MaxCachedText is maxCachedText.
const MaxCachedText = maxCachedText
