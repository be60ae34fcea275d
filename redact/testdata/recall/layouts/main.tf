resource "aws_db_instance" "main" {
  engine = "postgres"
  password = "Tf-Pa55w0rd-FAKE"
}
