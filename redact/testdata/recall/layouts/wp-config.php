<?php
define('DB_PASSWORD', 'Wp-Pa55!FAKE');
define('AUTH_KEY', 'OH5h{+7-sK{=b8G~!rnd9cBqe9e^VysVF0^/NHNI*xF=eT^V{If5%GW.J|p{FAKE');
