package dataset

import (
	"crypto/sha256"
	"encoding/binary"
)

// Split names.
const (
	SplitTrain      = "train"
	SplitValidation = "validation"
)

// splitOf is the split of the dialogue id: train when a seeded hash of the
// id, read as a number in [0, 1), is below share, else validation. It
// depends on the id and the seed alone — not on which other records an
// export keeps — so a dialogue stays in its split whatever the minimum
// score, the gates or the dialogues added to the run later.
func splitOf(id string, share float64, seed int64) string {
	h := sha256.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	h.Write([]byte(id))
	sum := h.Sum(nil)
	u := float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53)
	if u < share {
		return SplitTrain
	}
	return SplitValidation
}
