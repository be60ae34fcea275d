package auth

var signingKey = []byte("6003dfed040770f1e209d72eb282e100f7d3cdbd8895b9f1a13ac4eb036d5244")

const encryptionKey = "GHVlnAk19IqIhdRmCVOUPjvvCRRApN1sHewHWPQ7FAKE"
