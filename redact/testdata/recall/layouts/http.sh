curl -H "Authorization: Bearer qZgBuysjsmN5ln6ZGvXJkp480VPKrhiO7Pl7FAKE" https://api.fake.example/v1/me
curl -H 'Authorization: Basic YWxpY2U6RmFrZUI0c2ljIQ==' https://api.fake.example/
mysql -h db.fake.example -u root --password=Mysq1-R00t-FAKE app
