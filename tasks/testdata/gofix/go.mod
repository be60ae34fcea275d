module gofix

go 1.22
