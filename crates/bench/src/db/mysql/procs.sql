-- The restock trigger and the stored procedures, created after the load. Statements end with a
-- line holding only `$$`. None of them touches the DS3-only tables, so a DS2 load gets them all.

-- Restock: a sale that leaves fewer than 3 in stock logs a reorder of the difference to 250
-- (2,500 for the hot products, every 10,000th id, as the driver and the generator define them)
-- and puts the stock at that level. `@storbench_restoring` is set only by `reset`, which writes
-- the loaded quantities back, some of them below 3.
CREATE TRIGGER restock BEFORE UPDATE ON inventory FOR EACH ROW
BEGIN
  DECLARE v_level INT DEFAULT IF(NEW.prod_id % 10000 = 0, 2500, 250);
  IF NEW.quan_in_stock < 3 AND @storbench_restoring IS NULL THEN
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
