package auth

var signingKey = []byte("9716660e55b9132f5492c5ff4ddadb80e605df8b7c101df778271bfb34f54bdb")

const encryptionKey = "IyKlkpH6MVVWJTpgcKTDwE2Ch/LWUMlLenzccm38FAKE"
