CREATE TABLE membership (customerid INTEGER PRIMARY KEY, membershiptype INTEGER NOT NULL, expiredate TEXT NOT NULL);
CREATE TABLE reviews (
  review_id INTEGER PRIMARY KEY, prod_id INTEGER NOT NULL, review_date TEXT NOT NULL, stars INTEGER NOT NULL,
  customerid INTEGER NOT NULL, review_summary TEXT NOT NULL, review_text TEXT);
CREATE TABLE reviews_helpfulness (
  review_helpfulness_id INTEGER PRIMARY KEY, review_id INTEGER NOT NULL, customerid INTEGER NOT NULL,
  helpfulness INTEGER NOT NULL);
