-- The restock trigger and the stored procedures (DS3 spec §3.1's transactions), created after
-- the load. Statements end with a line holding only `$$`. A DS2 load gets them all too: the
-- server resolves table names when a procedure runs, so the ones on the DS3-only tables
-- (membership, reviews) answer "table doesn't exist" there, and a DS2 run never calls them.
-- Every SELECT a procedure runs comes back to the client as a result set.

-- Restock: a sale that leaves fewer than 3 in stock logs a reorder of the difference to 250
-- (2,500 for the hot products, every 10,000th id, as the driver and the generator define them)
-- and puts the stock at that level. `@storbench_restoring` is set only by `reset`, which writes
-- the loaded quantities back, some of them below 3. `@storbench_no_restock` is set by a session
-- of a run with restocking off, which follows DS3's MySQL edition: its trigger is a stub, so
-- stock runs out and the rollback rate climbs with the order count.
CREATE TRIGGER restock BEFORE UPDATE ON inventory FOR EACH ROW
BEGIN
  DECLARE v_level INT DEFAULT IF(NEW.prod_id % 10000 = 0, 2500, 250);
  IF NEW.quan_in_stock < 3 AND @storbench_restoring IS NULL AND @storbench_no_restock IS NULL THEN
    INSERT INTO reorder (prod_id, date_low, quan_low) VALUES (NEW.prod_id, CURDATE(), v_level - NEW.quan_in_stock);
    SET NEW.quan_in_stock = v_level;
  END IF;
END
$$

-- LOGIN: result set 1 is the customer id (0: no such user name and password); result set 2,
-- for a customer, is the newest 10 history rows as (title, actor, title of the related product).
CREATE PROCEDURE ds3_login(IN p_username VARCHAR(50), IN p_password VARCHAR(50))
BEGIN
  DECLARE v_id INT DEFAULT COALESCE(
    (SELECT customerid FROM customers WHERE username = p_username AND password = p_password), 0);
  SELECT v_id AS customerid;
  IF v_id > 0 THEN
    SELECT bought.title, bought.actor, related.title AS related_title
      FROM (SELECT prod_id, orderid FROM cust_hist WHERE customerid = v_id ORDER BY orderid DESC LIMIT 10) AS h
      JOIN products AS bought ON bought.prod_id = h.prod_id
      JOIN products AS related ON related.prod_id = bought.common_prod_id
      ORDER BY h.orderid DESC;
  END IF;
END
$$

-- NEW_CUSTOMER: the new id, or 0 when the user name is taken (checked first so that a taken
-- name burns no id; the unique index settles a race between two sessions).
CREATE PROCEDURE ds3_new_customer(
  IN p_firstname VARCHAR(50), IN p_lastname VARCHAR(50), IN p_address1 VARCHAR(50),
  IN p_address2 VARCHAR(50), IN p_city VARCHAR(50), IN p_state VARCHAR(50), IN p_zip INT,
  IN p_country VARCHAR(50), IN p_region TINYINT, IN p_email VARCHAR(50), IN p_phone VARCHAR(50),
  IN p_creditcardtype INT, IN p_creditcard VARCHAR(50), IN p_creditcardexpiration VARCHAR(50),
  IN p_username VARCHAR(50), IN p_password VARCHAR(50), IN p_age TINYINT UNSIGNED, IN p_income INT,
  IN p_gender VARCHAR(1))
BEGIN
  DECLARE v_taken INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR 1062 SET v_taken = 1;
  IF EXISTS (SELECT 1 FROM customers WHERE username = p_username) THEN
    SELECT 0 AS customerid;
  ELSE
    INSERT INTO customers (firstname, lastname, address1, address2, city, state, zip, country, region,
        email, phone, creditcardtype, creditcard, creditcardexpiration, username, password, age, income,
        gender)
      VALUES (p_firstname, p_lastname, p_address1, p_address2, p_city, p_state, p_zip, p_country, p_region,
        p_email, p_phone, p_creditcardtype, p_creditcard, p_creditcardexpiration, p_username, p_password,
        p_age, p_income, p_gender);
    SELECT IF(v_taken = 1, 0, LAST_INSERT_ID()) AS customerid;
  END IF;
END
$$

-- PURCHASE: one transaction. `p_items` is `prod:qty,prod:qty,...` sorted by product, so every
-- purchase locks inventory rows in the same order. An item over its stock rolls everything
-- back and returns 0; any error rolls back and is passed on with its own code (1213, 1205).
CREATE PROCEDURE ds3_purchase(IN p_customerid INT, IN p_n INT, IN p_items VARCHAR(400),
    IN p_net_cents BIGINT, IN p_tax_cents BIGINT, IN p_total_cents BIGINT)
proc: BEGIN
  DECLARE v_order INT;
  DECLARE v_i INT DEFAULT 0;
  DECLARE v_item VARCHAR(40);
  DECLARE v_prod INT;
  DECLARE v_qty INT;
  DECLARE v_stock INT;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_stock = NULL;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  INSERT INTO orders (orderdate, customerid, netamount, tax, totalamount)
    VALUES (CURDATE(), p_customerid, p_net_cents / 100, p_tax_cents / 100, p_total_cents / 100);
  SET v_order = LAST_INSERT_ID();
  WHILE v_i < p_n DO
    SET v_item = SUBSTRING_INDEX(SUBSTRING_INDEX(p_items, ',', v_i + 1), ',', -1);
    SET v_prod = CAST(SUBSTRING_INDEX(v_item, ':', 1) AS SIGNED);
    SET v_qty = CAST(SUBSTRING_INDEX(v_item, ':', -1) AS SIGNED);
    SET v_stock = NULL;
    SELECT quan_in_stock INTO v_stock FROM inventory WHERE prod_id = v_prod FOR UPDATE;
    IF v_stock IS NULL THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'purchase of a product that is not in inventory';
    END IF;
    IF v_qty > v_stock THEN
      ROLLBACK;
      SELECT 0 AS orderid;
      LEAVE proc;
    END IF;
    UPDATE inventory SET quan_in_stock = quan_in_stock - v_qty, sales = sales + v_qty WHERE prod_id = v_prod;
    INSERT INTO orderlines (orderlineid, orderid, prod_id, quantity, orderdate)
      VALUES (v_i + 1, v_order, v_prod, v_qty, CURDATE());
    INSERT INTO cust_hist (customerid, orderid, prod_id) VALUES (p_customerid, v_order, v_prod);
    SET v_i = v_i + 1;
  END WHILE;
  COMMIT;
  SELECT v_order AS orderid;
END
$$

-- NEW_MEMBER: one row, 1 when the customer became a member, 0 when already one (any other
-- error, such as an unknown customer, is passed on).
CREATE PROCEDURE ds3_new_member(IN p_customerid INT, IN p_level TINYINT)
BEGIN
  DECLARE v_added INT DEFAULT 1;
  DECLARE CONTINUE HANDLER FOR 1062 SET v_added = 0;
  INSERT INTO membership (customerid, membershiptype, expiredate) VALUES (p_customerid, p_level, CURDATE());
  SELECT v_added AS added;
END
$$

-- BROWSE_BY_CATEGORY: products on special in a category, at most p_batch.
CREATE PROCEDURE ds3_browse_by_category(IN p_category INT, IN p_batch INT)
  SELECT prod_id, category, title, actor, price, special, common_prod_id
    FROM products WHERE category = p_category AND special = 1 LIMIT p_batch
$$

-- BROWSE_BY_ACTOR / _BY_TITLE: products whose actor (or title) matches the words in natural
-- language mode, as DS3 searches: either word matches, the best ranked first, at most p_batch.
-- Each branch is its own statement, so each uses its column's FULLTEXT index.
CREATE PROCEDURE ds3_browse_by_words(IN p_by_title BOOLEAN, IN p_words VARCHAR(200), IN p_batch INT)
BEGIN
  IF p_by_title THEN
    SELECT prod_id, category, title, actor, price, special, common_prod_id
      FROM products WHERE MATCH (title) AGAINST (p_words) LIMIT p_batch;
  ELSE
    SELECT prod_id, category, title, actor, price, special, common_prod_id
      FROM products WHERE MATCH (actor) AGAINST (p_words) LIMIT p_batch;
  END IF;
END
$$

-- GET_PROD_REVIEWS_BY_ACTOR / _BY_TITLE, DS3's query: the first p_depth product-review rows whose
-- product's actor (or title) matches the word (natural language mode; DS3.5's search_depth,
-- 500 by default), joined with every helpfulness row of those reviews through the review_id
-- index and grouped per review, the most helpful p_batch first (reviews nobody rated are left
-- out by the inner join). The helpfulness rows are read from the clustered index, as DS3
-- reads them: its index set has no covering one. One statement per column, as above.
CREATE PROCEDURE ds3_review_search(IN p_by_title BOOLEAN, IN p_words VARCHAR(200), IN p_depth INT,
    IN p_batch INT)
BEGIN
  IF p_by_title THEN
    SELECT t.prod_id, t.title, t.actor, h.review_id, t.review_date, t.stars, t.customerid,
           t.review_summary, t.review_text, SUM(h.helpfulness) AS total
      FROM reviews_helpfulness h
      JOIN (SELECT p.title, p.actor, p.prod_id, r.review_date, r.stars, r.review_id, r.customerid,
                   r.review_summary, r.review_text
              FROM products p JOIN reviews r ON p.prod_id = r.prod_id
             WHERE MATCH (p.title) AGAINST (p_words) LIMIT p_depth) t ON h.review_id = t.review_id
     GROUP BY h.review_id ORDER BY total DESC LIMIT p_batch;
  ELSE
    SELECT t.prod_id, t.title, t.actor, h.review_id, t.review_date, t.stars, t.customerid,
           t.review_summary, t.review_text, SUM(h.helpfulness) AS total
      FROM reviews_helpfulness h
      JOIN (SELECT p.title, p.actor, p.prod_id, r.review_date, r.stars, r.review_id, r.customerid,
                   r.review_summary, r.review_text
              FROM products p JOIN reviews r ON p.prod_id = r.prod_id
             WHERE MATCH (p.actor) AGAINST (p_words) LIMIT p_depth) t ON h.review_id = t.review_id
     GROUP BY h.review_id ORDER BY total DESC LIMIT p_batch;
  END IF;
END
$$

-- GET_PROD_REVIEWS (most helpful first), _BY_STARS (p_stars not NULL: only that rating, found
-- through the (prod_id, stars) index) and _BY_DATE (p_by_date: newest first): DS3's query, a
-- product's reviews joined with their helpfulness rows and summed per review, the first
-- p_batch. One statement per variant, so each has DS3's access path.
CREATE PROCEDURE ds3_get_reviews(IN p_prod_id INT, IN p_stars TINYINT, IN p_by_date BOOLEAN, IN p_batch INT)
BEGIN
  IF p_stars IS NOT NULL THEN
    SELECT r.review_id, r.prod_id, r.review_date, r.stars, r.customerid, r.review_summary, r.review_text,
           SUM(h.helpfulness) AS total
      FROM reviews r JOIN reviews_helpfulness h ON r.review_id = h.review_id
     WHERE r.prod_id = p_prod_id AND r.stars = p_stars
     GROUP BY r.review_id ORDER BY total DESC LIMIT p_batch;
  ELSEIF p_by_date THEN
    SELECT r.review_id, r.prod_id, r.review_date, r.stars, r.customerid, r.review_summary, r.review_text,
           SUM(h.helpfulness) AS total
      FROM reviews r JOIN reviews_helpfulness h ON r.review_id = h.review_id
     WHERE r.prod_id = p_prod_id
     GROUP BY r.review_id ORDER BY r.review_date DESC LIMIT p_batch;
  ELSE
    SELECT r.review_id, r.prod_id, r.review_date, r.stars, r.customerid, r.review_summary, r.review_text,
           SUM(h.helpfulness) AS total
      FROM reviews r JOIN reviews_helpfulness h ON r.review_id = h.review_id
     WHERE r.prod_id = p_prod_id
     GROUP BY r.review_id ORDER BY total DESC LIMIT p_batch;
  END IF;
END
$$

-- NEW_PROD_REVIEW: one row, the new review's id.
CREATE PROCEDURE ds3_new_review(IN p_prod_id INT, IN p_stars TINYINT, IN p_customerid INT,
    IN p_summary VARCHAR(50), IN p_text VARCHAR(1000))
BEGIN
  INSERT INTO reviews (prod_id, review_date, stars, customerid, review_summary, review_text)
    VALUES (p_prod_id, CURDATE(), p_stars, p_customerid, p_summary, p_text);
  SELECT LAST_INSERT_ID() AS review_id;
END
$$

-- NEW_REVIEW_HELPFULNESS: one row, the new rating's id.
CREATE PROCEDURE ds3_new_helpfulness(IN p_review_id INT, IN p_customerid INT, IN p_rating TINYINT)
BEGIN
  INSERT INTO reviews_helpfulness (review_id, customerid, helpfulness) VALUES (p_review_id, p_customerid, p_rating);
  SELECT LAST_INSERT_ID() AS review_helpfulness_id;
END
$$

-- Prices (the driver sums an order from them): (prod_id, price in cents) of each product in
-- `p_ids`, `id,id,...` as PURCHASE's items are; a product listed twice comes back once and an
-- unknown one not at all, as with `prod_id IN (...)`. The list is read as a JSON array, so each
-- product is one primary-key lookup.
CREATE PROCEDURE ds3_prices(IN p_ids TEXT)
  SELECT prod_id, CAST(ROUND(price * 100) AS SIGNED) AS cents FROM products
   WHERE prod_id IN (SELECT id FROM JSON_TABLE(CONCAT('[', p_ids, ']'), '$[*]' COLUMNS (id INT PATH '$')) AS j)
$$
