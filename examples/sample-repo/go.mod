module example.com/samplerepo

go 1.22
