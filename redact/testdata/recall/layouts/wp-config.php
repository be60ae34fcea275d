<?php
define('DB_PASSWORD', 'Wp-Pa55!FAKE');
define('AUTH_KEY', 'ho:RXs#5Sam#z0wltrG-.HVlnA}k19#IqIhdRmC%.VO]|UP-?jvvCRR|A|<+FAKE');
