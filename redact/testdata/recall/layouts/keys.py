SIGNING_KEY = "6d54278b557a00ed60181d5468f96bf965c3ccf3714325e4bb7bd4aa420efa4e"
WEBHOOK_HMAC = 'd4534db5a15b4bd73ea5b23fff10c2b98327b89716660e55b9132f5492c5ff4d'
app.config["SESSION_KEY"] = "2O3VHa6yav38ITDXhde1+EDJlDhV+Sms9xqT2UIyFAKE="
SECRET_KEY = "django-insecure-+!s=f$fhq3tx=xyrwhdbs&!_$wolp1od*5syx*t9f!sc!gfake"
