curl -H "Authorization: Bearer u9vOO1GD85qgoHAmuEEaCSeTv1wuL9bGi7XIFAKE" https://api.fake.example/v1/me
curl -H 'Authorization: Basic YWxpY2U6RmFrZUI0c2ljIQ==' https://api.fake.example/
mysql -h db.fake.example -u root --password=Mysq1-R00t-FAKE app
