-- admin password: S3cret!Adm1n-FAKE
SELECT id, total FROM orders WHERE total > 100;
