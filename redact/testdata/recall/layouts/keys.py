SIGNING_KEY = "d3c94ead7e306862d3ed5d326f5bac42d97f730b2d3279d27368f1bf88b2fa4e"
WEBHOOK_HMAC = 'ed0c4cd4859f95b23d5764bbd12f5d4196d54278b557a00ed60181d5468f96bf'
app.config["SESSION_KEY"] = "KzuZpXX8nFfqpiv6qVUFV3qOQrjc53qxoq0TwQgxFAKE="
SECRET_KEY = "django-insecure-x+j7(x0o7@g3uk@xfh)4@=54db+yfxs_9!)=r#^@gfp^wrfake"
