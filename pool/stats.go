package pool

// Stats is a member's accounting since it was built.
type Stats struct {
	Member string `json:"member"`
	Model  string `json:"model"`
	// Calls counts HTTP calls made (retries included); Retries the waits
	// between them; Answers the candidates returned (cache hits included);
	// Failures the requests that got no candidate.
	Calls    int `json:"calls"`
	Retries  int `json:"retries"`
	Answers  int `json:"answers"`
	Failures int `json:"failures"`
	// Skipped counts the requests the open circuit breaker did not send;
	// Late the answers a pool stopped waiting for at its deadline.
	Skipped int `json:"skipped"`
	Late    int `json:"late"`
	// Circuit is the breaker's state: closed, open or half-open.
	Circuit   string `json:"circuit"`
	CacheHits int    `json:"cache_hits"`
	// PromptTokens and CompletionTokens count the calls made (cache hits
	// excluded).
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CostUSD is the estimated spend: cache hits cost nothing.
	CostUSD float64 `json:"cost_usd"`
	// LimitWait is the time calls waited for the member's rpm and tpm
	// limits (on a farm, the farm's), in seconds summed over the calls:
	// a limit that holds the simulators back shows here.
	LimitWait float64 `json:"limit_wait_seconds,omitempty"`
	// FailingStreak counts the pool requests failed in a row; Failing is
	// set once it reaches Config.FailingAfter.
	FailingStreak int    `json:"failing_streak"`
	Failing       bool   `json:"failing"`
	LastError     string `json:"last_error,omitempty"`
}

func (m *Member) record(f func(*Stats)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(&m.stats)
}

// Stats returns the member's accounting.
func (m *Member) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}
